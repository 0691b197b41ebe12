//! `hashroute`: route keys to nodes from the command line, with the same routers as the library.
//!
//! The binary is `src/main.rs`, one call to [`main`]; this library holds the commands and the
//! proxies' configuration readers ([`proxy`]), so the fuzz targets and tests reach them.
//!
//! ```text
//! hashroute route --algo ketama --nodes-file servers.txt < keys.txt
//! hashroute route --algo jump --buckets 1000 --input u64 0xDEADBEEF
//! hashroute replicas --algo ring --nodes a,b,c,d -n 2 user:42
//! hashroute slot '{user}:42'
//! hashroute migrate --algo ring --from before.txt --to after.txt
//! hashroute fingerprint --algo maglev --nodes-file servers.txt
//! hashroute recommend --node-count 50 --max-load 1.10
//! hashroute route --from-config /etc/haproxy/haproxy.cfg --pool web /img/logo.png
//! hashroute migrate --from-config nutcracker.yml --to-config nutcracker-new.yml --pool sessions
//! hashroute route --algo kafka --partitions 12 user:42
//! hashroute ring join cache-7 --weight 2 --zone dc1 --etcd 127.0.0.1:2379 --prefix /rings/cache
//! hashroute route --etcd 127.0.0.1:2379 --prefix /rings/cache user:42
//! ```
//!
//! Contract (tests/cli.rs holds it): `route`, `replicas` and `slot` print one `KEY<TAB>ANSWER`
//! line per key in input order, the key exactly as given; keys come from the arguments, else one
//! per line from stdin (streamed, flat memory). `migrate` prints the library's
//! `MigrationPlan` display and `fingerprint` one line of 32 hex digits, both byte for byte what
//! the library gives for the same configuration, as does `recommend` (the benchmark sweep's
//! recommendation). Any bad input exits non-zero with exactly one line on stderr,
//! `hashroute: error: ...`; a closed stdout (`| head`) exits quietly.
//!
//! Adding a subcommand: a module with an `Args` struct and a `run` function, a variant in
//! `Cmd`, an arm in `run`. Router-building subcommands flatten `router_args::RouterArgs` so
//! every one accepts the same router flags (`migrate`, which reads two node lists, flattens
//! `router_args::AlgoArgs` alone).

mod completions;
mod crush;
mod crush_args;
mod crush_migrate;
mod failure;
mod fingerprint;
mod keys;
mod migrate;
mod names;
mod output;
mod pg;
pub mod proxy;
mod proxy_args;
mod proxy_migrate;
mod proxy_recommend;
mod recommend;
mod replicas;
mod resize;
mod ring;
mod route;
mod router_args;
mod slot;
mod token;
mod token_replicas;
mod tokens;
mod tokens_file;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::failure::Failure;

/// Route keys to nodes with consistent hashing, exactly as the real systems do.
#[derive(Parser, Debug)]
#[command(
    name = "hashroute",
    version,
    about = names::help_list("Route keys to nodes with consistent hashing", &names::algorithms(), ""),
    max_term_width = 100,
    after_help = "Output (route, replicas, slot): one KEY<TAB>ANSWER line per key, in input order, the key exactly \
                  as given.\n\
                  Exit status: 0 on success (also when stdout is closed early), 1 on bad input, 2 on bad usage; \
                  errors are one line on stderr."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    Route(route::RouteArgs),
    Slot(slot::SlotArgs),
    Token(token::TokenArgs),
    #[command(arg_required_else_help = false)]
    Tokens(tokens::TokensArgs),
    Replicas(replicas::ReplicasArgs),
    Migrate(migrate::MigrateArgs),
    Fingerprint(fingerprint::FingerprintArgs),
    Recommend(recommend::RecommendArgs),
    Resize(resize::ResizeArgs),
    Ring(ring::RingArgs),
    Completions(completions::CompletionsArgs),
    Man(completions::ManArgs),
    Pg(pg::PgArgs),
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.cmd {
        Cmd::Route(args) => route::run(args),
        Cmd::Slot(args) => slot::run(args),
        Cmd::Token(args) => token::run(args),
        Cmd::Tokens(args) => tokens::run(args),
        Cmd::Replicas(args) => replicas::run(args),
        Cmd::Migrate(args) => migrate::run(args),
        Cmd::Fingerprint(args) => fingerprint::run(args),
        Cmd::Recommend(args) => recommend::run(args),
        Cmd::Resize(args) => resize::run(args),
        Cmd::Ring(args) => ring::run(args),
        Cmd::Completions(args) => completions::run_completions(args, Cli::command()),
        Cmd::Man(args) => completions::run_man(args, Cli::command()),
        Cmd::Pg(args) => pg::run(args),
    }
}

/// Runs the command line of this process (`std::env::args_os`) and returns its exit status: the
/// whole `hashroute` binary.
pub fn main() -> ExitCode {
    // A panic is a bug, but the user still gets the one-line error the contract promises
    // instead of a multi-line panic report.
    std::panic::set_hook(Box::new(|info| {
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        report(&format!("internal error (please report): {}{place}", one_line(&payload)));
    }));
    let cli = match Cli::try_parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    match run(cli) {
        Ok(()) | Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
        Err(Failure::Message(message)) => {
            report(&message);
            ExitCode::FAILURE
        }
    }
}

/// Writes `hashroute: error: MESSAGE` as one line. Ignores a failing stderr: there is nowhere
/// left to report it, and `eprintln!` would panic.
fn report(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "hashroute: error: {}", one_line(message));
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `--help` and `--version` print normally; every other clap error is cut down to its first
/// line (clap adds usage and tips on following lines), exit status 2 as clap uses.
fn usage_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = err.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            report(&missing_subcommand(&err));
            ExitCode::from(2)
        }
        _ => {
            report(&first_paragraph(&err.render().to_string()));
            ExitCode::from(2)
        }
    }
}

/// "missing subcommand (expected one of: ...)": the subcommands of the command that lacks one,
/// which clap names for a nested command (`tokens`), else the top level's.
fn missing_subcommand(err: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let (parent, names) = match (err.get(ContextKind::InvalidSubcommand), err.get(ContextKind::ValidSubcommand)) {
        (Some(ContextValue::String(path)), Some(ContextValue::Strings(names))) if path.contains(' ') => {
            // `path` is the command's full name, "hashroute tokens".
            (format!("{} ", path.split_once(' ').map_or(path.as_str(), |(_, rest)| rest)), names.clone())
        }
        _ => (String::new(), Cli::command().get_subcommands().map(|c| c.get_name().to_owned()).collect()),
    };
    let names: Vec<String> = names.into_iter().filter(|n| n != "help").collect();
    format!("missing {parent}subcommand (expected one of: {}; try --help)", names.join(", "))
}

/// The first line of a clap error without its `error: ` prefix; when that line ends in `:`
/// (e.g. "the following required arguments were not provided:"), the lines up to the next
/// blank one are the list it introduces and are joined onto it.
fn first_paragraph(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).skip_while(|l| l.is_empty());
    let first = lines.next().unwrap_or("invalid arguments");
    let mut message = first.strip_prefix("error: ").unwrap_or(first).to_owned();
    if message.ends_with(':') {
        let list: Vec<&str> = lines.take_while(|l| !l.is_empty()).collect();
        message = format!("{message} {}", list.join(", "));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn one_line_joins() {
        assert_eq!(one_line("a\n  b\tc\n"), "a b c");
    }

    #[test]
    fn clap_errors_shrink_to_one_line() {
        let missing = "error: the following required arguments were not provided:\n  --algo <ALGO>\n  -n <N>\n\n\
                       Usage: hashroute replicas --algo <ALGO> -n <N>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            first_paragraph(missing),
            "the following required arguments were not provided: --algo <ALGO>, -n <N>"
        );
        let unknown = "error: unexpected argument '--x' found\n\n  tip: to pass '--x' as a value, use '-- --x'\n";
        assert_eq!(first_paragraph(unknown), "unexpected argument '--x' found");
        for args in [&["hashroute", "route"][..], &["hashroute", "route", "--algo"], &["hashroute", "route", "--bogus"]]
        {
            let err = Cli::try_parse_from(args).unwrap_err();
            let line = first_paragraph(&err.render().to_string());
            assert!(!line.contains('\n') && !line.starts_with("error") && !line.is_empty(), "{args:?}: {line}");
        }
    }
}

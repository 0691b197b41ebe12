//! `hashroute completions SHELL` and `hashroute man`: shell completions (clap_complete) and
//! man pages (clap_mangen), generated from the same clap definitions the parser uses, so they
//! list exactly the subcommands and flags the binary accepts.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Args, Command};
use clap_complete::Shell;

use crate::failure::Failure;

/// Print a completion script for a shell
///
/// Install it where your shell looks, for example:
///   bash: hashroute completions bash > ~/.local/share/bash-completion/completions/hashroute
///   zsh:  hashroute completions zsh > "${fpath[1]}/_hashroute"
///   fish: hashroute completions fish > ~/.config/fish/completions/hashroute.fish
///   PowerShell: hashroute completions powershell >> $PROFILE
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub(crate) struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    shell: Shell,
}

/// Print the man page (roff), or write one page per command into a directory
///
/// `hashroute man | man -l -` reads it at once; `hashroute man --out-dir DIR` writes
/// hashroute.1 and hashroute-SUBCOMMAND.1 for every subcommand, to install into a man1 directory
/// (e.g. /usr/local/share/man/man1).
#[derive(Args, Debug)]
pub(crate) struct ManArgs {
    /// Write every page (hashroute.1, hashroute-route.1, ...) into this directory instead
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

/// Writes the completion script for `args.shell` of `cmd` (the whole `hashroute` command).
pub(crate) fn run_completions(args: CompletionsArgs, mut cmd: Command) -> Result<(), Failure> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let name = cmd.get_name().to_owned();
    clap_complete::generate(args.shell, &mut cmd, name, &mut out);
    out.flush()?;
    Ok(())
}

/// Writes the man page of `cmd` on stdout, or every page into `--out-dir`.
pub(crate) fn run_man(args: ManArgs, cmd: Command) -> Result<(), Failure> {
    let cmd = with_version(cmd);
    if let Some(dir) = &args.out_dir {
        clap_mangen::generate_to(cmd, dir).map_err(|e| Failure::context(dir.display(), e))?;
        return Ok(());
    }
    let mut out = io::BufWriter::new(io::stdout().lock());
    clap_mangen::Man::new(cmd).render(&mut out)?;
    out.flush()?;
    Ok(())
}

/// The page's footer names the version; `Command::version` is set by `#[command(version)]`,
/// this only makes sure subcommand pages carry it too.
fn with_version(cmd: Command) -> Command {
    let version = env!("CARGO_PKG_VERSION");
    cmd.version(version).mut_subcommands(|sub| sub.version(version))
}

//! The `hashroute` command-line tool (placeholder until the CLI lands).

fn main() {
    eprintln!("hashroute: the CLI is not built yet");
    std::process::exit(2);
}

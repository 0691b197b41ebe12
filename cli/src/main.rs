//! The `hashroute` binary: everything lives in the `hashroute_cli` library.

fn main() -> std::process::ExitCode {
    hashroute_cli::main()
}

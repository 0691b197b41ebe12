//! The token allocator's study figures (hashroute_bench::allocator_study), printed.
//!
//! `cargo run --release -p hashroute-bench --example allocator_study [FIGURE...]`: every figure
//! without arguments (a few minutes in release: the 1000-draw growth and the 100,000-node
//! allocation dominate), else the named ones.

use hashroute_bench::allocator_study::FIGURES;

fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    if let Some(unknown) = wanted.iter().find(|w| !FIGURES.iter().any(|(n, _)| n == w)) {
        let names: Vec<&str> = FIGURES.iter().map(|(n, _)| *n).collect();
        eprintln!("allocator_study: unknown figure {unknown:?} (one of: {})", names.join(", "));
        std::process::exit(2);
    }
    for (name, figure) in FIGURES {
        if wanted.is_empty() || wanted.iter().any(|w| w == name) {
            println!("== {name}");
            print!("{}", figure());
        }
    }
}

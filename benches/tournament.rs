//! `cargo bench --bench tournament`: one group of 41 trivial strategies.
fn main() {
    let jobs = knobeln::sandbox::allowed_cpus().len();
    match knobeln::bench::tournament_bench(41, jobs) {
        Ok(b) => b.print(),
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::exit(1);
        }
    }
}

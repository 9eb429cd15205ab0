//! `cargo bench --bench game`: a 1000-throw game against the raw pipe floor.
fn main() {
    let games = std::env::var("KNOBELN_BENCH_GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    match knobeln::bench::game_bench(games) {
        Ok(b) => b.print(),
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::exit(1);
        }
    }
}

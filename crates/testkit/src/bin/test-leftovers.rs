//! `test-leftovers`: what tests left on the test servers. `tests/run` calls
//! it with `--remove` before the suite (clearing what an interrupted earlier
//! run left, so it cannot fail this one) and with `--check` after it, which
//! fails when any test of this run left a key, a stream or a database.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let remove = match mode.as_str() {
        "--remove" => true,
        "--check" => false,
        _ => {
            eprintln!("usage: test-leftovers --remove | --check");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let found = runtime.block_on(fogblast_testkit::leftovers());
    if found.is_empty() {
        return ExitCode::SUCCESS;
    }
    if remove {
        eprintln!("test-leftovers: removing {} things an earlier run left", found.len());
        runtime.block_on(fogblast_testkit::remove_leftovers());
        return ExitCode::SUCCESS;
    }
    eprintln!("test-leftovers: the tests left {} things behind:", found.len());
    for thing in found.iter().take(50) {
        eprintln!("  {thing}");
    }
    ExitCode::FAILURE
}

//! The tests' Python has the requirements installed and imports them.

#[test]
fn the_test_python_imports_every_requirement() {
    let python = fogblast_testkit::python::python();
    let output = std::process::Command::new(&python)
        .args(["-c", "import berserk, nats, chess; print(berserk.__name__, nats.__name__, chess.__name__)"])
        .output()
        .expect("python runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "berserk nats chess");
}

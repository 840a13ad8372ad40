//! The HTTP load generator (`examples/load`, run by `benches/http_load.sh`) end to end against
//! the axum demo: two flows, briefly, on two connections. Checks that it answers a table with
//! every request served; asserts no timing.

mod demo;

use std::process::Command;

use demo::Server;

#[test]
fn load_example_drives_the_demo() {
    let server = Server::start("axum");
    let load = demo::example("load");
    let output = Command::new(&load)
        .args(["--base", &server.base])
        .args(["--connections", "2", "--duration", "1", "--warmup", "0.2"])
        .args(["--flow", "client_credentials,refresh"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", load.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{}:\n{stdout}\n{stderr}",
        output.status
    );

    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip(2) // the header and its rule
        .map(|line| line.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    let flows: Vec<&str> = rows.iter().map(|row| row[0]).collect();
    assert_eq!(flows, ["client_credentials", "refresh"], "{stdout}");
    for row in &rows {
        let requests: usize = row[1].parse().expect("a request count");
        assert!(requests > 0, "{} answered nothing:\n{stdout}", row[0]);
        assert_eq!(row[5], "0", "non-2xx answers for {}:\n{stdout}", row[0]);
        assert_eq!(
            row[6], "0",
            "requests without an answer for {}:\n{stdout}",
            row[0]
        );
        assert!(
            row[3].ends_with(" ms") && row[4].ends_with(" ms"),
            "{stdout}"
        );
    }
    // Every refresh used the token the one before it issued: a reused refresh token would
    // have revoked its family and the chain would have been restarted.
    assert!(!rows[1][7].contains("restarted"), "{stdout}");
    server.assert_alive_and_calm();
}

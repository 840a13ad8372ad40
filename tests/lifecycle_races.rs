//! Revocation racing refreshes of the same family leaves nothing usable.

mod common;

use std::sync::Arc;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn revocation_racing_refreshes_leaves_nothing_usable() {
    for round in 0..20 {
        let f = Arc::new(fixture());
        let tokens = f.fast_tokens().await;
        let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
        let barrier = Arc::new(tokio::sync::Barrier::new(40));
        let mut tasks = Vec::new();
        for i in 0..40 {
            let (f, refresh, barrier) = (f.clone(), refresh.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                if i % 4 == 0 {
                    let response = f
                        .revoke(Some(&f.fast_basic()), &format!("token={refresh}"))
                        .await;
                    assert_eq!(response.status(), 200);
                    None
                } else {
                    let response = f.refresh(&refresh).await;
                    (response.status() == 200).then(|| json(&response))
                }
            }));
        }
        let mut issued = vec![tokens];
        for task in tasks {
            issued.extend(task.await.unwrap());
        }
        assert!(
            issued.len() <= 2,
            "round {round}: the token rotated more than once"
        );
        for tokens in &issued {
            let access = tokens["access_token"].as_str().unwrap();
            assert!(!f.access_is_active(access).await, "round {round}");
            let refresh = tokens["refresh_token"].as_str().unwrap();
            assert_error(&f.refresh(refresh).await, 400, "invalid_grant");
        }
    }
}

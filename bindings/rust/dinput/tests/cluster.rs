//! Cluster handles: explicit ones, and resolving torchrun's variables. One test function:
//! it sets process environment variables, which the other tests of this binary must not see
//! change under them.

use std::time::Duration;

use dinput::{Cluster, Code, Collective, CollectiveOptions};

#[test]
fn explicit_and_torchrun_clusters() {
    let c = Cluster::new(1, 4, "tcp://127.0.0.1:5000").unwrap();
    assert_eq!((c.rank(), c.world_size()), (Some(1), 4));
    assert_eq!(c.rdzv_url(), "tcp://127.0.0.1:5000");
    assert_eq!(c.coordinator_host(), "127.0.0.1");
    assert_eq!(c.source(), "explicit");
    assert_eq!(c.local_rank(), None);
    assert_eq!(c.task(), None);
    assert!(c.is_input_worker());

    let err = Cluster::new(4, 4, "").unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("got 4"), "{}", err.message);

    for (k, v) in [
        ("RANK", "3"),
        ("WORLD_SIZE", "4"),
        ("LOCAL_RANK", "1"),
        ("LOCAL_WORLD_SIZE", "2"),
        ("MASTER_ADDR", "node-a"),
        ("MASTER_PORT", "29500"),
        ("TORCHELASTIC_RUN_ID", "r1"),
    ] {
        std::env::set_var(k, v);
    }
    let c = Cluster::resolve("torchrun").unwrap();
    assert_eq!((c.rank(), c.world_size(), c.local_rank(), c.local_world_size()), (Some(3), 4, Some(1), Some(2)));
    assert_eq!(c.rdzv_url(), "tcp://node-a:29500");
    assert_eq!(c.job_id(), "r1");
    std::env::set_var("RANK", "4");
    let err = Cluster::resolve("torchrun").unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("RANK=4 is not below WORLD_SIZE=4"), "{}", err.message);

    let tf = r#"{"cluster": {"chief": ["c:1"], "worker": ["w:1"], "ps": ["p:1"]}, "task": {"type": "ps", "index": 0}}"#;
    std::env::set_var("TF_CONFIG", tf);
    let ps = Cluster::resolve("auto").unwrap();
    assert_eq!(ps.task(), Some(("ps", 0)));
    assert!(!ps.is_input_worker());
    assert_eq!(ps.rank(), None, "a ps task has no worker rank");
    assert_eq!(ps.world_size(), 2);
}

#[test]
fn collective_options_and_the_loopback_rule() {
    let mut o = CollectiveOptions::new().unwrap();
    assert_eq!(o.timeout(), Duration::from_secs(60));
    assert_eq!((o.job_id(), o.interface(), o.address(), o.allow_loopback()), ("", "", "", false));
    o.set_timeout(Some(Duration::from_millis(300)))
        .unwrap()
        .set_job_id("rust-options")
        .unwrap()
        .set_address("127.0.0.1")
        .unwrap()
        .set_allow_loopback(false)
        .unwrap();
    assert_eq!(o.timeout(), Duration::from_millis(300));
    assert_eq!((o.job_id(), o.address()), ("rust-options", "127.0.0.1"));
    assert!(o.set_interface("a\0b").is_err());

    // Two workers meeting at 192.0.2.1 (a documentation address: another host's, as far as
    // the rule can tell; worker 0 serves the rendezvous on every interface), this one
    // listening on 127.0.0.1: nothing shows that the other runs on this host, so the loopback
    // address is refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let c = Cluster::new(0, 2, &format!("tcp://192.0.2.1:{port}")).unwrap();
    let gloo = dinput::build_info().contains("\"gloo\":{\"compiled\":true");
    let err = Collective::from_cluster(&c, Some(&o)).unwrap_err();
    if gloo {
        assert_eq!(err.code, Code::FailedPrecondition, "{}", err.message);
        assert!(err.message.contains("loopback address 127.0.0.1"), "{}", err.message);
        // Allowed, it waits for worker 1, who never comes.
        o.set_allow_loopback(true).unwrap();
        assert!(o.allow_loopback());
        let err = Collective::from_cluster(&c, Some(&o)).unwrap_err();
        assert_eq!(err.code, Code::DeadlineExceeded, "{}", err.message);
        assert!(err.message.contains("for worker 1"), "{}", err.message);
    } else {
        assert_eq!(err.code, Code::Unimplemented);
    }
}

//! Unit tests of the organizer's tables: the lease and the audit log.

use super::*;
use crate::store::Store;

fn at(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_000_000_000 + secs, 0).unwrap()
}

#[test]
fn the_lease_has_one_holder_and_is_taken_over_only_after_it_expires() {
    let store = Store::open_in_memory().unwrap();
    let c = store.conn();
    let claimant = |holder: &'static str, description: &'static str| Claimant {
        holder,
        description,
        process: "boot 1 1",
    };
    assert_eq!(
        acquire_lease(c, claimant("a", "A"), at(0), at(60)).unwrap(),
        LeaseClaim::Acquired
    );
    // B while A's lease runs: held, and B learns who holds it.
    match acquire_lease(c, claimant("b", "B"), at(30), at(90)).unwrap() {
        LeaseClaim::Held(row) => {
            assert_eq!(row.description, "A");
            assert_eq!(row.expires_at, at(60));
        }
        other => panic!("{other:?}"),
    }
    // A's heartbeat extends it; B still cannot take it.
    assert!(renew_lease(c, "a", at(50), at(110)).unwrap());
    assert!(matches!(
        acquire_lease(c, claimant("b", "B"), at(100), at(160)).unwrap(),
        LeaseClaim::Held(_)
    ));
    // A stops renewing (kill -9): at expiry B takes it over.
    assert_eq!(
        acquire_lease(c, claimant("b", "B"), at(110), at(170)).unwrap(),
        LeaseClaim::Acquired
    );
    let row = lease(c).unwrap().unwrap();
    assert_eq!((row.holder.as_str(), row.acquired_at), ("b", at(110)));
    // A wakes up: its renewal fails, so it knows it lost the contest.
    assert!(!renew_lease(c, "a", at(111), at(171)).unwrap());
    // A's release does not free B's lease; B's own does.
    release_lease(c, "a").unwrap();
    assert!(lease(c).unwrap().is_some());
    release_lease(c, "b").unwrap();
    assert!(lease(c).unwrap().is_none());
    assert_eq!(
        acquire_lease(c, claimant("a", "A"), at(112), at(172)).unwrap(),
        LeaseClaim::Acquired
    );
    // A dead holder's lease is taken over before it expires, by one
    // claimant only.
    assert!(take_over_lease(c, "a", claimant("c", "C"), at(113), at(173)).unwrap());
    assert!(!take_over_lease(c, "a", claimant("d", "D"), at(113), at(173)).unwrap());
    assert_eq!(lease(c).unwrap().unwrap().description, "C");
}

#[test]
fn the_audit_log_keeps_every_action_in_order() {
    let store = Store::open_in_memory().unwrap();
    let c = store.conn();
    for i in 0..3 {
        log_action(
            c,
            at(i),
            "root",
            "resend",
            &i.to_string(),
            &serde_json::json!({}),
        )
        .unwrap();
    }
    let log = admin_log(c, 2).unwrap();
    assert_eq!(
        log.iter().map(|l| l.target.as_str()).collect::<Vec<_>>(),
        ["1", "2"]
    );
}

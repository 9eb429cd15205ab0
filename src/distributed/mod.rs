//! Games played by workers on other machines, through NATS JetStream.
//!
//! The coordinator (the server, or `knobeln tournament --nats`) stays the
//! only writer of the store and keeps deciding everything; its engine gets
//! a [`coordinator::NatsRunner`] instead of the local thread pool, behind
//! the same [`Runner`] seam. Workers (`knobeln worker`) are stateless: they
//! pull jobs from a JetStream work-queue stream, fetch both programs by
//! SHA-256 from a JetStream object store (with a local cache, verified on
//! every load), play the game in the same sandbox as the local pool, publish
//! the record to the coordinator's result subject, and acknowledge.
//!
//! - [`wire`]: the messages and the checks on what a worker sends (pure).
//! - [`coordinator`]: the runner: uploads programs, publishes jobs, takes
//!   results, de-duplicates them, re-publishes what a worker could not play.
//! - [`worker`]: the worker's loop, its pinned game threads and its cache.
//! - [`queue`]: the streams, subjects and connection options both sides
//!   share.
//! - [`instant`]: a runner that answers at once, for the benchmarks
//!   (`crate::bench_nats` measures the queue's overhead).
//!
//! What travels: a job names the game (tournament, round, group, slot,
//! attempt), the referee's configuration, both programs' hashes and the
//! seeds of the game and of its players; never the tournament's secret key,
//! team names, sources, mail or anything from the database. Two kinds of
//! jobs exist: KNOBELN games (the engine's, through [`coordinator::NatsRunner`])
//! and bot games of the line-protocol disciplines (a bot contest's, through
//! [`coordinator::NatsQueue`] with its own task); each kind has its own
//! subject and consumer (see [`wire`]).
//!
//! Not here: scheduling, rescheduling, disqualification and result order
//! (the engine's), and the sandbox itself (the referee's).

pub mod coordinator;
pub mod instant;
pub mod queue;
pub mod wire;
pub mod worker;

use std::time::Duration;

use crate::engine::pool::{Pool, Runner};
use crate::engine::run::RunnerFactory;
use crate::engine::EngineError;
use crate::referee::{Referee, RefereeConfig};
pub use queue::{
    ensure_queue, jobs_filter, jobs_subject, new_session, results_filter, results_subject,
    worker_of_subject, workers_consumer, DistributedError, NatsOptions, QueueSettings, JOBS_STREAM,
    PROGRAMS_BUCKET, RESULTS_STREAM,
};

/// Where a tournament's games are played: the local pool of `jobs` threads,
/// or workers through NATS when `nats` is set.
pub fn runner_factory(
    nats: Option<(NatsOptions, QueueSettings)>,
    tournament: i64,
    jobs: usize,
) -> Box<RunnerFactory<'static>> {
    match nats {
        None => Box::new(move |referee: &RefereeConfig| {
            Ok(Box::new(Pool::start(jobs, Referee::new(*referee))) as Box<dyn Runner>)
        }),
        Some((options, settings)) => Box::new(move |referee: &RefereeConfig| {
            coordinator::NatsRunner::start(&options, &settings, tournament, *referee)
                .map(|r| Box::new(r) as Box<dyn Runner>)
                .map_err(|e| EngineError::Invalid(e.to_string()))
        }),
    }
}

/// The NATS settings of the `[engine]` config section, with the password
/// read from its file (or `KNOBELN_NATS_PASSWORD`, applied by the config).
pub fn from_config(
    engine: &crate::config::EngineConfig,
) -> Result<Option<(NatsOptions, QueueSettings)>, crate::config::ConfigError> {
    let Some(url) = &engine.nats else {
        return Ok(None);
    };
    let password = crate::config::secret(&engine.nats_password, &engine.nats_password_file)?;
    let options = NatsOptions {
        url: url.clone(),
        user: engine.nats_user.clone(),
        password,
        creds_file: engine.nats_creds_file.clone(),
        nkey_file: engine.nats_nkey_file.clone(),
        ca_file: engine.nats_ca_file.clone(),
        cert_file: engine.nats_cert_file.clone(),
        key_file: engine.nats_key_file.clone(),
    };
    let d = QueueSettings::default();
    let settings = QueueSettings {
        ack_wait: if engine.ack_wait_secs == 0 {
            d.ack_wait
        } else {
            Duration::from_secs(engine.ack_wait_secs)
        },
        in_flight: if engine.in_flight == 0 {
            d.in_flight
        } else {
            engine.in_flight
        },
    };
    Ok(Some((options, settings)))
}

#[cfg(test)]
mod tests {
    use super::queue::reconnect_delay;
    use super::wire::Discipline;
    use super::*;
    use crate::config::Config;

    #[test]
    fn without_nats_in_the_config_games_stay_local() {
        let cfg = Config::parse("").unwrap();
        assert!(from_config(&cfg.engine).unwrap().is_none());
    }

    #[test]
    fn the_engine_section_names_the_server_and_the_password_may_come_from_the_environment() {
        let mut cfg = Config::parse(
            "[engine]\nnats = \"tls://nats.example:4222\"\nnats_user = \"coordinator\"\n\
             nats_ca_file = \"/etc/ca.pem\"\nack_wait_secs = 7\n",
        )
        .unwrap();
        cfg.apply_env(|k| (k == "KNOBELN_NATS_PASSWORD").then(|| "s3cret".to_string()));
        let (options, settings) = from_config(&cfg.engine).unwrap().unwrap();
        assert_eq!(options.url, "tls://nats.example:4222");
        assert_eq!(options.user.as_deref(), Some("coordinator"));
        assert_eq!(options.password.as_deref(), Some("s3cret"));
        assert_eq!(settings.ack_wait, Duration::from_secs(7));
        assert_eq!(settings.in_flight, QueueSettings::default().in_flight);
        // The password never shows in a debug print.
        assert!(!format!("{options:?}").contains("s3cret"));
    }

    #[test]
    fn a_session_asks_the_queue_after_twice_ack_wait_and_not_before_five_seconds() {
        let with = |secs| QueueSettings {
            ack_wait: Duration::from_secs(secs),
            ..QueueSettings::default()
        };
        assert_eq!(with(30).stall_after(), Duration::from_secs(60));
        assert_eq!(with(1).stall_after(), Duration::from_secs(5));
    }

    #[test]
    fn the_first_connection_attempt_does_not_wait() {
        // async-nats calls the delay with 1 before the first attempt; a
        // quarter of a second there was paid at every start.
        assert_eq!(reconnect_delay(1), Duration::ZERO);
        assert_eq!(reconnect_delay(2), Duration::from_millis(250));
        assert_eq!(reconnect_delay(100), Duration::from_secs(2));
    }

    #[test]
    fn subjects_keep_disciplines_and_tournaments_apart() {
        assert_eq!(
            jobs_subject(Discipline::Knobeln, 7),
            "knobeln.jobs.v11.knobeln.7"
        );
        assert_eq!(
            jobs_filter(Discipline::Knobeln),
            "knobeln.jobs.v11.knobeln.*"
        );
        // The names deploy/nats-server.conf gives workers the right to pull from.
        assert_eq!(workers_consumer(Discipline::Knobeln), "workers-knobeln-v11");
        assert_eq!(jobs_subject(Discipline::Bots, 7), "knobeln.jobs.v11.bots.7");
        assert_eq!(workers_consumer(Discipline::Bots), "workers-bots-v11");
        // The first format's filters (`knobeln.jobs.<kind>.*`) do not
        // overlap this format's subjects (a work queue refuses overlaps).
        for d in Discipline::ALL {
            let old = format!("knobeln.jobs.{}.*", d.as_str());
            assert_ne!(
                jobs_subject(d, 7).split('.').count(),
                old.split('.').count()
            );
        }
        // A worker answers on a subject of its own; the coordinator goes by
        // that subject's last token, never by the answer's body.
        assert_eq!(results_subject("abc", "w-1"), "knobeln.results.abc.w-1");
        assert_eq!(results_filter("abc"), "knobeln.results.abc.*");
        assert_eq!(
            worker_of_subject("knobeln.results.abc.w-1", "abc"),
            Some("w-1")
        );
        assert_eq!(worker_of_subject("knobeln.results.abc", "abc"), None);
        assert_eq!(worker_of_subject("knobeln.results.abcd.w", "abc"), None);
        assert_eq!(worker_of_subject("knobeln.results.abc.w.x", "abc"), None);
        assert_eq!(worker_of_subject("knobeln.results.xyz.w", "abc"), None);
        assert_eq!(
            wire::worker_name_from("host.example.org-12"),
            "host-example-org-12"
        );
        assert!(wire::valid_worker_name(&wire::worker_name_from("")));
        let s = new_session();
        assert!(wire::valid_session(&s), "{s}");
        assert!(wire::valid_job_name(&format!("{s}-12")));
        // A job's name is plain, and no worker can guess one it never took.
        let (a, b) = (queue::job_name(&s, 12), queue::job_name(&s, 12));
        assert!(
            wire::valid_job_name(&a) && a.starts_with(&format!("{s}-12-")),
            "{a}"
        );
        assert_ne!(a, b);
        assert_ne!(s, new_session());
    }

    #[test]
    fn random_names_are_lower_case_hex_of_the_bytes_asked_for() {
        for n in [0, 1, 8, 12] {
            let h = queue::random_hex(n);
            assert_eq!(h.len(), 2 * n, "{h}");
            assert!(
                h.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
                "{h}"
            );
        }
        assert_eq!(new_session().len(), 24);
        assert_ne!(queue::random_hex(8), queue::random_hex(8));
    }
}

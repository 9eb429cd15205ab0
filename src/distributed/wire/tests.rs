//! Unit tests of the wire format: round trips of every message, and the
//! checks on what a worker sends back (each refusal).

use super::*;
use crate::discipline::play::Outcome as BotOutcome;
use crate::game::knobeln::Params;
use crate::referee::Failure;

fn cfg(l: u32) -> RefereeConfig {
    RefereeConfig {
        params: Params {
            l,
            ..Params::default()
        },
        ..RefereeConfig::default()
    }
}

fn played(l: u32, seed: u64) -> GameRecord {
    let throws = vec![[100, 200]; l as usize];
    let points = replay(&cfg(l).params, &throws).unwrap();
    GameRecord {
        seed,
        points,
        throws,
        failures: vec![],
    }
}

fn ident(slot: u32) -> GameIdent {
    GameIdent {
        tournament: 1,
        round: 1,
        group: 2,
        slot,
        attempt: 1,
    }
}

fn knobeln_game(slot: u32) -> GameJob {
    GameJob {
        game: ident(slot),
        play: Play::Knobeln {
            referee: cfg(10),
            programs: ["a".repeat(64), "b".repeat(64)],
            seeds: Seeds {
                game: u64::MAX,
                players: [1, u64::MAX - 1],
            },
        },
    }
}

fn job() -> JobMessage {
    JobMessage {
        format: FORMAT,
        session: "abc123".into(),
        job: "abc123-7".into(),
        games: vec![knobeln_game(3), knobeln_game(4)],
    }
}

/// The play of the job's first game, to change.
fn play_of(j: &mut JobMessage) -> &mut Play {
    &mut j.games[0].play
}

#[test]
fn a_job_round_trips_with_its_discipline_named() {
    let j = job();
    let bytes = j.encode_json();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.contains("\"discipline\":\"knobeln\""), "{text}");
    assert_eq!(JobMessage::decode(&bytes).unwrap(), j);
    assert_eq!(JobMessage::decode(&j.encode()).unwrap(), j);
}

#[test]
fn a_job_whose_program_name_is_a_path_is_refused() {
    let mut j = job();
    let Play::Knobeln { programs, .. } = &mut j.games[1].play else {
        unreachable!()
    };
    programs[1] = format!("../../{}", "a".repeat(58));
    assert!(matches!(
        JobMessage::decode(&j.encode()),
        Err(WireError::Invalid(_))
    ));
    let mut j = job();
    j.session = "a.>".into();
    assert!(JobMessage::decode(&j.encode()).is_err());
    let mut j = job();
    j.job = "x.>".into();
    assert!(JobMessage::decode(&j.encode()).is_err());
}

#[test]
fn the_identity_of_an_unreadable_job_is_found_if_it_is_there() {
    let text = br#"{"format":2,"session":"abc","job":"abc-3","games":[{"game":{"tournament":1,"round":1,"group":1,"slot":4,"attempt":1},"play":{"discipline":"go"}}]}"#;
    let (s, job, games) = JobMessage::identity(text).unwrap();
    assert_eq!(
        (s.as_str(), job.as_str(), games[0].slot),
        ("abc", "abc-3", 4)
    );
    assert!(JobMessage::decode(text).is_err());
    assert_eq!(
        JobMessage::identity(br#"{"session":"a.>","job":"a-1","games":[]}"#),
        None
    );
    assert_eq!(
        JobMessage::identity(br#"{"session":"abc","job":"abc-1","games":[]}"#),
        None
    );
}

#[test]
fn a_job_has_at_least_one_game_not_too_many_and_of_one_kind() {
    let mut j = job();
    j.games.clear();
    assert!(matches!(
        JobMessage::decode(&j.encode()),
        Err(WireError::Invalid(_))
    ));
    let mut j = job();
    j.games = (0..MAX_GAMES_PER_JOB as u32 + 1)
        .map(knobeln_game)
        .collect();
    assert!(matches!(
        JobMessage::decode(&j.encode()),
        Err(WireError::Invalid(_))
    ));
    let mut j = job();
    j.games.push(bot_job(2).games.remove(0));
    assert_eq!(
        JobMessage::decode(&j.encode()),
        Err(WireError::Invalid("games of two kinds in one job".into()))
    );
}

#[test]
fn knobeln_games_go_128_to_a_job_unless_their_records_are_long_and_bot_games_alone() {
    let knobeln = |l: u32| Play::Knobeln {
        referee: cfg(l),
        programs: ["a".repeat(64), "b".repeat(64)],
        seeds: Seeds {
            game: 1,
            players: [2, 3],
        },
    };
    assert_eq!(games_per_job(&knobeln(1000)), KNOBELN_GAMES_PER_JOB);
    assert_eq!(games_per_job(&knobeln(20_000)), 8);
    assert_eq!(games_per_job(&knobeln(1_000_000)), 1);
    assert_eq!(games_per_job(&bot_job(2).games[0].play), 1);
    assert_eq!(
        most_games_per_job(Discipline::Knobeln),
        KNOBELN_GAMES_PER_JOB
    );
    assert_eq!(most_games_per_job(Discipline::Bots), 1);
    // 128 answers of 1000 throws fit the budget.
    let m = ResultMessage {
        format: FORMAT,
        session: "abc".into(),
        job: "abc-1".into(),
        worker: "w".into(),
        results: (0..KNOBELN_GAMES_PER_JOB as u32)
            .map(|i| GameResult {
                game: ident(i),
                outcome: Outcome::Played(played(1000, 7)),
            })
            .collect(),
    };
    assert!(m.encode().len() < RESULT_BUDGET, "{}", m.encode().len());
}

/// A job's answer fits a message whatever throws its strategies make: the
/// games a job carries are counted from the longest record the rules
/// allow (every throw as far from the one before as the range lets it),
/// not from a typical one. Throws that jump between the ends of the range
/// (a run length of 1, or a wide range) once made the answers of a full
/// job larger than a message: every game a fault, played again, never
/// fitting.
#[test]
fn a_jobs_answer_fits_a_message_whatever_the_strategies_throw() {
    for (a, b, l) in [
        (1, 12288, 1000),
        (1, 12288, 3000),
        (1, 12288, 20_000),
        (1, i64::from(i32::MAX), 1000),
        (-(1i64 << 40), 1i64 << 40, 700),
    ] {
        let referee = RefereeConfig {
            params: Params { a, b, k: 1, l },
            ..RefereeConfig::default()
        };
        // The range's ends in turn: the longest difference every throw.
        let throws: Vec<[i64; 2]> = (0..l)
            .map(|i| if i % 2 == 0 { [a, b] } else { [b, a] })
            .collect();
        let points = replay(&referee.params, &throws).unwrap();
        let play = Play::Knobeln {
            referee,
            programs: ["a".repeat(64), "b".repeat(64)],
            seeds: Seeds {
                game: 1,
                players: [2, 3],
            },
        };
        let n = games_per_job(&play) as u32;
        let m = answer_of(
            (0..n)
                .map(|i| GameResult {
                    game: ident(i),
                    outcome: Outcome::Played(GameRecord {
                        seed: u64::MAX - u64::from(i),
                        points,
                        throws: throws.clone(),
                        failures: vec![],
                    }),
                })
                .collect(),
        );
        let bytes = m.encode().len();
        assert!(
            bytes <= MAX_MESSAGE_BYTES,
            "[{a}, {b}], {l} throws: {n} games a job answer in {bytes} bytes"
        );
    }
}

#[test]
fn an_unknown_discipline_or_format_is_refused_not_guessed() {
    let text = String::from_utf8(job().encode_json())
        .unwrap()
        .replace("\"knobeln\"", "\"morabaraba\"");
    assert!(JobMessage::decode(text.as_bytes()).is_err());
    let mut j = job();
    j.format = 1;
    assert_eq!(JobMessage::decode(&j.encode()), Err(WireError::Format(1)));
    assert!(matches!(
        JobMessage::decode(&vec![b' '; MAX_MESSAGE_BYTES + 1]),
        Err(WireError::TooLarge(_))
    ));
}

/// Format 8: a KNOBELN job is binary, its referee configurations and
/// programs written once (a game is about 40 bytes, not about 600 as
/// JSON), and what it says comes back as it was sent.
#[test]
fn a_knobeln_job_travels_in_binary_with_its_tables_once() {
    let mut j = job();
    j.games = (0..KNOBELN_GAMES_PER_JOB as u32)
        .map(knobeln_game)
        .collect();
    // A second referee and a program seen a second time, in another seat.
    let Play::Knobeln {
        referee, programs, ..
    } = &mut j.games[5].play
    else {
        unreachable!()
    };
    referee.params.l = 20;
    programs.swap(0, 1);
    let bytes = j.encode();
    assert!(job::is_binary(&bytes));
    assert!(bytes.len() < 50 * j.games.len(), "{} bytes", bytes.len());
    assert!(
        bytes.len() * 10 < j.encode_json().len(),
        "{} bytes, as JSON {}",
        bytes.len(),
        j.encode_json().len()
    );
    assert_eq!(JobMessage::decode(&bytes).unwrap(), j);
    let (session, name, games) = JobMessage::identity(&bytes).unwrap();
    assert_eq!((session, name), (j.session.clone(), j.job.clone()));
    assert_eq!(games, j.games.iter().map(|g| g.game).collect::<Vec<_>>());
}

/// Whatever a job's bytes, a worker gets an error, never a panic or an
/// allocation larger than the bytes allow: cut short anywhere, a byte
/// changed, bytes after the end, counts and lengths beyond the message or
/// beyond a job, indices beyond their tables, numbers that overflow.
#[test]
fn a_damaged_binary_job_is_refused() {
    let j = job();
    let bytes = j.encode();
    for n in 0..bytes.len() {
        assert!(JobMessage::decode(&bytes[..n]).is_err(), "cut at {n}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(JobMessage::decode(&longer).is_err());
    for i in job::MAGIC.len()..bytes.len() {
        for x in [0xff, 0x80, 0x01] {
            let mut b = bytes.clone();
            b[i] ^= x;
            // Refused or read as some other job that passes the checks:
            // never a panic.
            if let Ok(other) = JobMessage::decode(&b) {
                assert_eq!(JobMessage::decode(&other.encode()), Ok(other));
            }
            let _ = JobMessage::identity(&b);
        }
    }
    // The frame's front: magic, format, session, job.
    let front = |format: u64| {
        let mut f = job::MAGIC.to_vec();
        crate::store::put_varint(&mut f, format);
        for t in ["abc", "abc-1"] {
            f.push(t.len() as u8);
            f.extend_from_slice(t.as_bytes());
        }
        f
    };
    // A count of games beyond a job, or beyond what any bytes could hold.
    for n in [MAX_GAMES_PER_JOB as u64 + 1, u64::MAX, 1 << 40] {
        let mut b = front(u64::from(FORMAT));
        crate::store::put_varint(&mut b, n);
        assert!(JobMessage::decode(&b).is_err(), "{n} games");
        assert_eq!(JobMessage::identity(&b), None);
    }
    // A varint longer than 64 bits.
    let mut b = front(u64::from(FORMAT));
    b.extend_from_slice(&[0xff; 11]);
    assert!(JobMessage::decode(&b).is_err());
    // One game whose tables are oversized, or whose indices point beyond
    // them, or whose referee's text claims more bytes than there are.
    let one_game = |tail: &[u8]| {
        let mut b = front(u64::from(FORMAT));
        b.extend_from_slice(&[1, 2, 1, 1, 4, 1]); // n = 1, its identity
        b.push(0); // KNOBELN
        b.extend_from_slice(tail);
        b
    };
    let referee = serde_json::to_vec(&cfg(10)).unwrap();
    let mut tables = vec![1];
    crate::store::put_varint(&mut tables, referee.len() as u64);
    tables.extend_from_slice(&referee);
    tables.push(2);
    tables.extend_from_slice(&[0xaa; 64]);
    let seeds = [7u8; 24];
    let good = one_game(&[&tables[..], &[0, 0, 1], &seeds[..]].concat());
    assert_eq!(JobMessage::decode(&good).unwrap().games.len(), 1);
    for bad in [
        [&tables[..], &[0, 0, 2], &seeds[..]].concat(), // program 2 of 2
        [&tables[..], &[1, 0, 1], &seeds[..]].concat(), // referee 1 of 1
        [&tables[..], &[0, 0, 1], &seeds[..23]].concat(), // seeds cut short
        [
            &tables[..],
            &[0, 0xff, 0xff, 0xff, 0xff, 0x0f, 1],
            &seeds[..],
        ]
        .concat(),
        vec![2], // 2 referees for 1 game
        vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
        vec![1, 0xff, 0xff, 0xff, 0xff, 0x0f], // a referee of 4 GB
        vec![
            1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ],
        [&tables[..tables.len() - 65], &[3]].concat(), // 3 programs for 1 game
        [&tables[..tables.len() - 65], &[2], &[0xaa; 63]].concat(), // short hash
    ] {
        assert!(JobMessage::decode(&one_game(&bad)).is_err(), "{bad:?}");
    }
    // An unknown kind: refused, but its games are found to report.
    let mut unknown = front(u64::from(FORMAT));
    unknown.extend_from_slice(&[1, 2, 1, 1, 4, 1, 9]);
    assert!(JobMessage::decode(&unknown).is_err());
    assert_eq!(JobMessage::identity(&unknown).unwrap().2[0].slot, 4);
    // Another format: refused for its format, named, its games found.
    for format in [7, 8, 9, 10, 12, u64::from(u32::MAX) + 1] {
        let mut b = front(format);
        b.extend_from_slice(&[1, 2, 1, 1, 4, 1, 0]);
        assert_eq!(
            JobMessage::decode(&b),
            Err(WireError::Format(u32::try_from(format).unwrap_or(u32::MAX)))
        );
        assert_eq!(JobMessage::identity(&b).unwrap().2.len(), 1);
    }
    // Format 7's jobs were JSON: refused for their format, clearly.
    let mut seven = job();
    seven.format = 7;
    assert_eq!(
        JobMessage::decode(&seven.encode_json()),
        Err(WireError::Format(7))
    );
    assert_eq!(
        WireError::Format(7).to_string(),
        format!("message format 7, this program reads format {FORMAT}")
    );
}

fn answer_of(results: Vec<GameResult>) -> ResultMessage {
    ResultMessage {
        format: FORMAT,
        session: "abc".into(),
        job: "abc-1".into(),
        worker: "w".into(),
        results,
    }
}

#[test]
fn a_record_travels_compactly_and_the_old_form_is_read_too() {
    let mut r = played(1000, 7);
    r.throws[500] = [12288, 1];
    let m = answer_of(vec![GameResult {
        game: ident(3),
        outcome: Outcome::Played(r.clone()),
    }]);
    let bytes = m.encode_json();
    assert!(bytes.len() < 4000, "{} bytes for 1000 throws", bytes.len());
    assert_eq!(ResultMessage::decode(&bytes).unwrap(), m);
    // Throws as pairs (the form of the first format) are read too.
    let old = serde_json::json!({
        "format": FORMAT, "session": "abc", "job": "abc-1", "worker": "w",
        "results": [{"game": ident(3),
                     "outcome": {"played": serde_json::to_value(&r).unwrap()}}]
    });
    let back = ResultMessage::decode(old.to_string().as_bytes()).unwrap();
    assert_eq!(back.results[0].outcome, Outcome::Played(r));
    // Throws text with an escape in it (JSON may write any character as
    // `\uXXXX`) cannot be borrowed from the message; it is read all the
    // same.
    let text = String::from_utf8(bytes.clone()).unwrap();
    let at = text.find("\"throws\":\"").unwrap() + "\"throws\":\"".len();
    let first = text[at..].chars().next().unwrap();
    let escaped = format!("{}\\u{:04x}{}", &text[..at], first as u32, &text[at + 1..]);
    assert_ne!(escaped, text);
    assert_eq!(ResultMessage::decode(escaped.as_bytes()).unwrap(), m);
    // Damaged throws are unreadable, not a panic.
    let text = String::from_utf8(bytes)
        .unwrap()
        .replace("\"throws\":\"", "\"throws\":\"!!");
    assert!(ResultMessage::decode(text.as_bytes()).is_err());
}

/// Format 7: the answer is binary, a 1000-throw record's throws as their
/// raw bytes (about three quarters of the JSON's size); faults, bot games
/// and failures travel in it as JSON; it reads back as it was.
#[test]
fn an_answer_travels_in_binary_with_every_kind_of_outcome() {
    let mut failed = played(10, 9);
    failed.throws.truncate(4);
    failed.points = replay(&cfg(10).params, &failed.throws).unwrap();
    failed.failures = vec![Failure {
        player: 1,
        throw: 5,
        kind: FailureKind::Output {
            line: "garbage".into(),
        },
        reason: "a sentence".into(),
    }];
    let mut big = played(1000, u64::MAX);
    big.throws[500] = [12288, -1];
    let m = ResultMessage {
        worker: "w\u{e9}".into(),
        ..answer_of(vec![
            GameResult {
                game: ident(3),
                outcome: Outcome::Played(big.clone()),
            },
            GameResult {
                game: GameIdent {
                    tournament: -5,
                    attempt: u32::MAX,
                    ..ident(4)
                },
                outcome: Outcome::Played(failed),
            },
            GameResult {
                game: ident(5),
                outcome: Outcome::Fault("out of disk".into()),
            },
            GameResult {
                game: ident(6),
                outcome: Outcome::BotGame(Box::new(bot_game())),
            },
        ])
    };
    let bytes = m.encode();
    assert!(answer::is_binary(&bytes));
    assert_eq!(ResultMessage::decode(&bytes).unwrap(), m);
    let one = answer_of(vec![GameResult {
        game: ident(3),
        outcome: Outcome::Played(big),
    }]);
    let (binary, json) = (one.encode().len(), one.encode_json().len());
    assert!(
        binary * 4 < json * 3,
        "{binary} bytes against {json} as JSON"
    );
}

/// Whatever a worker sends, the binary reader answers with an error,
/// never a panic or a record it did not send: cut short anywhere, a byte
/// changed, bytes after the end, another format, too many games.
#[test]
fn a_damaged_binary_answer_is_refused() {
    let m = answer_of(
        (0..3)
            .map(|i| GameResult {
                game: ident(i),
                outcome: Outcome::Played(played(20, u64::from(i))),
            })
            .collect(),
    );
    let bytes = m.encode();
    for n in answer::MAGIC.len()..bytes.len() {
        assert!(ResultMessage::decode(&bytes[..n]).is_err(), "cut at {n}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(ResultMessage::decode(&longer).is_err());
    for i in answer::MAGIC.len()..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0xff;
        // Either refused or read as some other answer: never a panic.
        let _ = ResultMessage::decode(&b);
    }
    // Another format's binary answer is refused for its format.
    let mut other = bytes.clone();
    other[answer::MAGIC.len()] = 12;
    assert_eq!(ResultMessage::decode(&other), Err(WireError::Format(12)));
    // Format 10's workers judged a bot's rest after its answer by the wall
    // clock: refused for their format.
    let mut ten = bytes.clone();
    ten[answer::MAGIC.len()] = 10;
    assert_eq!(ResultMessage::decode(&ten), Err(WireError::Format(10)));
    // Format 9's answers charged another fuel: refused for their format.
    let mut nine = bytes.clone();
    nine[answer::MAGIC.len()] = 9;
    assert_eq!(ResultMessage::decode(&nine), Err(WireError::Format(9)));
    // Format 8's answers went to the session's subject and named their
    // worker in the body only: refused for their format.
    let mut eight = bytes.clone();
    eight[answer::MAGIC.len()] = 8;
    assert_eq!(ResultMessage::decode(&eight), Err(WireError::Format(8)));
    // Format 7's answers were binary as well: refused for their format.
    let mut seven = bytes.clone();
    seven[answer::MAGIC.len()] = 7;
    assert_eq!(ResultMessage::decode(&seven), Err(WireError::Format(7)));
    // Format 6's answers were JSON: refused for their format, clearly.
    let mut six = m.clone();
    six.format = 6;
    assert_eq!(
        ResultMessage::decode(&six.encode_json()),
        Err(WireError::Format(6))
    );
    let too_many = answer_of(
        (0..=MAX_GAMES_PER_JOB as u32)
            .map(|i| GameResult {
                game: ident(i),
                outcome: Outcome::Fault("x".into()),
            })
            .collect(),
    );
    assert!(matches!(
        ResultMessage::decode(&too_many.encode()),
        Err(WireError::Invalid(_))
    ));
}

#[test]
fn a_true_record_passes() {
    let r = played(10, 7);
    assert_eq!(check_record(&cfg(10), 7, r.clone()), Ok(r));
}

#[test]
fn forged_points_a_wrong_seed_or_a_short_game_are_refused() {
    let mut r = played(10, 7);
    r.points[0] += 1;
    assert!(check_record(&cfg(10), 7, r).is_err());
    assert!(check_record(&cfg(10), 8, played(10, 7)).is_err());
    let mut r = played(10, 7);
    r.throws.pop();
    r.points = replay(&cfg(10).params, &r.throws).unwrap();
    assert!(check_record(&cfg(10), 7, r).is_err());
    // A rule break the worker did not report.
    let mut r = played(10, 7);
    r.throws[3] = [0, 200];
    assert!(check_record(&cfg(10), 7, r).is_err());
}

#[test]
fn a_failure_gets_the_coordinators_sentence_and_must_sit_after_the_last_throw() {
    let mut r = played(10, 7);
    r.throws.truncate(4);
    r.points = replay(&cfg(10).params, &r.throws).unwrap();
    r.failures = vec![Failure {
        player: 1,
        throw: 5,
        kind: FailureKind::Crashed {
            signal: 11,
            trap: Some("out of bounds memory access".into()),
        },
        reason: "send money to ...".into(),
    }];
    let checked = check_record(&cfg(10), 7, r.clone()).unwrap();
    assert_eq!(
        checked.failures[0].reason,
        describe_failure(
            &cfg(10),
            5,
            &FailureKind::Crashed {
                signal: 11,
                trap: Some("out of bounds memory access".into()),
            }
        )
    );
    let mut wrong = r.clone();
    wrong.failures[0].throw = 9;
    assert!(check_record(&cfg(10), 7, wrong).is_err());
    let mut long = r.clone();
    long.failures[0].kind = FailureKind::Output {
        line: "x".repeat(500),
    };
    assert!(check_record(&cfg(10), 7, long).is_err());
    // A trap's words come from the worker too: capped and printable.
    let mut trap = r;
    trap.failures[0].kind = FailureKind::Crashed {
        signal: 11,
        trap: Some("out of bounds\nDear participant, ...".into()),
    };
    assert!(check_record(&cfg(10), 7, trap).is_err());
}

fn bot_job(seats: usize) -> JobMessage {
    let language = crate::lang::LanguageTable::builtin().languages[0].clone();
    JobMessage {
        games: vec![GameJob {
            game: ident(3),
            play: Play::Bots {
                setup: crate::discipline::footsteps::setup(
                    crate::discipline::footsteps::rules::Params::default(),
                ),
                limits: LineLimits::default(),
                seats: (0..seats)
                    .map(|i| BotSeat {
                        program: format!("{i}").repeat(64),
                        language: language.clone(),
                    })
                    .collect(),
                keep_transcript: true,
                folders: None,
            },
        }],
        ..job()
    }
}

fn bot_game() -> Played {
    use crate::discipline::footsteps::rules::{Ending, GameOutcome};
    Played {
        outcome: Some(BotOutcome::new(
            crate::discipline::Discipline::FOOTSTEPS,
            GameOutcome {
                winner: Some(1),
                ending: Ending::Goal,
                position: 2,
                points_left: [0, 0],
                turns: 7,
            },
        )),
        failures: vec![],
        cpu_ms: vec![1, 2],
        cpu_us: vec![1000, 2000],
        wall_ms: 5,
        stderr: vec![String::new(), String::new()],
        moves: None,
        transcript: None,
        transcript_truncated: false,
        folders: None,
    }
}

#[test]
fn a_bot_job_round_trips_with_its_game_limits_and_languages() {
    let j = bot_job(2);
    let bytes = j.encode_json();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.contains("\"discipline\":\"bots\""), "{text}");
    assert!(text.contains("\"game\":\"footsteps\""), "{text}");
    assert_eq!(JobMessage::decode(&bytes).unwrap(), j);
    assert_eq!(JobMessage::decode(&j.encode()).unwrap(), j);
}

#[test]
fn an_island_travels_as_its_text_and_is_checked_on_arrival() {
    let island = crate::discipline::flooding::rules::Island::parse(
        "GAMEBOARDSTART 3,3\n###\n#o#\n###\nGAMEBOARDEND\nROUND 1 2,2\n",
    )
    .unwrap();
    let mut j = bot_job(1);
    let Play::Bots { setup, .. } = play_of(&mut j) else {
        unreachable!()
    };
    *setup = crate::discipline::data::Tagged::new(
        crate::discipline::Discipline::FLOODING,
        crate::discipline::flooding::FloodSetup {
            island,
            params: crate::discipline::flooding::rules::Params::default(),
            seed: 9,
        },
    );
    assert_eq!(JobMessage::decode(&j.encode()).unwrap(), j);
    // A board that is not an island is refused before anything runs.
    let text = String::from_utf8(j.encode_json())
        .unwrap()
        .replace("###\\n#o#", "###\\n#x#");
    assert!(matches!(
        JobMessage::decode(text.as_bytes()),
        Err(WireError::Unreadable(_))
    ));
}

#[test]
fn a_bot_job_with_the_wrong_seats_a_path_or_endless_limits_is_refused() {
    assert!(matches!(
        JobMessage::decode(&bot_job(3).encode()),
        Err(WireError::Invalid(_))
    ));
    let mut j = bot_job(2);
    let Play::Bots { seats, .. } = play_of(&mut j) else {
        unreachable!()
    };
    seats[0].program = "../etc/passwd".into();
    assert!(JobMessage::decode(&j.encode()).is_err());
    let mut j = bot_job(2);
    let Play::Bots { limits: l, .. } = play_of(&mut j) else {
        unreachable!()
    };
    l.cpu = std::time::Duration::from_secs(7200);
    assert!(matches!(
        JobMessage::decode(&j.encode()),
        Err(WireError::Invalid(_))
    ));
}

#[test]
fn kept_folders_come_back_one_per_seat_within_their_quota_or_not_at_all() {
    use crate::sandbox::folder::{Entry, FolderImage};
    let small = FolderImage::new(vec![Entry::File {
        path: "n".into(),
        bytes: vec![1; 10],
        executable: false,
    }]);
    let mut p = bot_game();
    assert_eq!(check_folders(&p, None), Ok(()));
    assert!(
        check_folders(&p, Some((2, 4096))).is_err(),
        "none came back"
    );
    p.folders = Some(vec![small.clone(), FolderImage::empty()]);
    // Ten bytes are a page of the tmpfs.
    assert_eq!(check_folders(&p, Some((2, 4096))), Ok(()));
    assert!(check_folders(&p, Some((2, 4095)))
        .unwrap_err()
        .contains("quota"));
    assert!(check_folders(&p, None).is_err(), "none were sent");
    p.folders = Some(vec![small]);
    assert!(
        check_folders(&p, Some((2, 4096))).is_err(),
        "one for two seats"
    );
    // A job's folders are one per seat.
    let mut j = bot_job(2);
    if let Play::Bots { folders, .. } = &mut j.games[0].play {
        *folders = Some(vec![FolderImage::empty()]);
    }
    assert!(JobMessage::decode(&j.encode()).is_err());
}

#[test]
fn a_true_bot_game_passes_and_a_failure_gets_the_coordinators_sentence() {
    let setup =
        crate::discipline::footsteps::setup(crate::discipline::footsteps::rules::Params::default());
    assert_eq!(check_bot_game(&setup, bot_game()), Ok(bot_game()));
    let mut p = bot_game();
    p.failures = vec![crate::lines::BotFailure {
        bot: 0,
        turn: 3,
        kind: BotFailureKind::Crashed { signal: 11 },
        line: None,
        reason: "send money to ...".into(),
    }];
    let checked = check_bot_game(&setup, p).unwrap();
    assert_eq!(
        checked.failures[0].reason,
        describe_bot_failure(0, 3, &BotFailureKind::Crashed { signal: 11 }, None)
    );
    assert!(checked.failures[0]
        .reason
        .starts_with("player 1, turn 3: crashed"));
}

/// Issue 34: a result that cannot travel is never published (and
/// retried forever): it says why, within a message.
#[test]
fn a_result_too_large_for_a_message_becomes_a_fault_that_travels() {
    let mut p = bot_game();
    p.moves = Some("x".repeat(MAX_MESSAGE_BYTES + 1));
    let game = GameIdent::new(
        1,
        GameKey {
            round: 1,
            group: 1,
            slot: 1,
        },
        0,
    );
    let r = ResultMessage {
        format: FORMAT,
        session: "s".into(),
        job: "j".into(),
        worker: "w".into(),
        results: vec![GameResult {
            game,
            outcome: Outcome::BotGame(Box::new(p)),
        }],
    };
    let bytes = r.encode_within_limit();
    assert!(bytes.len() <= MAX_MESSAGE_BYTES);
    let back = ResultMessage::decode(&bytes).unwrap();
    match &back.results[0].outcome {
        Outcome::Fault(why) => assert!(why.contains("more than a message"), "{why}"),
        other => panic!("{other:?}"),
    }
    // A result that fits is sent as it is.
    let small = ResultMessage {
        results: vec![GameResult {
            game,
            outcome: Outcome::BotGame(Box::new(bot_game())),
        }],
        ..back
    };
    assert_eq!(small.clone().encode_within_limit(), small.encode());
}

#[test]
fn a_workers_moves_are_kept_when_they_replay_and_refused_when_they_cannot_be_this_games() {
    let setup =
        crate::discipline::footsteps::setup(crate::discipline::footsteps::rules::Params::default());
    let mut p = bot_game();
    p.moves = Some("0: 1\n1: 2\n".into());
    assert_eq!(
        check_bot_game(&setup, p).unwrap().moves.as_deref(),
        Some("0: 1\n1: 2\n")
    );
    // A worker of this version sends format 2 (players from 1); one of
    // before it format 1 (seats from 0): both are kept as sent.
    let two = "# knobeln moves 2\n1: 1\n2: 2\n";
    let mut p = bot_game();
    p.moves = Some(two.into());
    assert_eq!(
        check_bot_game(&setup, p).unwrap().moves.as_deref(),
        Some(two)
    );
    let mut p = bot_game();
    p.moves = Some("2: 1\n".into());
    assert!(check_bot_game(&setup, p).unwrap_err().contains("seat 2"));
    let mut p = bot_game();
    p.moves = Some("# knobeln moves 2\n3: 1\n".into());
    assert!(check_bot_game(&setup, p).unwrap_err().contains("player 3"));
    let mut p = bot_game();
    p.moves = Some("x".repeat(MAX_MESSAGE_BYTES + 1));
    assert!(check_bot_game(&setup, p).is_err());
}

#[test]
fn a_bot_game_with_seats_that_do_not_exist_or_of_another_game_is_refused() {
    let setup =
        crate::discipline::footsteps::setup(crate::discipline::footsteps::rules::Params::default());
    let mut p = bot_game();
    let mut o = p
        .outcome
        .as_ref()
        .unwrap()
        .get::<crate::discipline::footsteps::rules::GameOutcome>()
        .clone();
    o.winner = Some(2);
    p.outcome = Some(BotOutcome::new(crate::discipline::Discipline::FOOTSTEPS, o));
    assert!(check_bot_game(&setup, p).is_err());
    let mut p = bot_game();
    p.cpu_us.push(1);
    assert!(check_bot_game(&setup, p).is_err());
    let mut p = bot_game();
    p.failures = vec![crate::lines::BotFailure {
        bot: 5,
        turn: 1,
        kind: BotFailureKind::ForbiddenCall,
        line: None,
        reason: String::new(),
    }];
    assert!(check_bot_game(&setup, p).is_err());
    let mut p = bot_game();
    p.failures = vec![crate::lines::BotFailure {
        bot: 1,
        turn: 1,
        kind: BotFailureKind::Rule {
            rule: "x".repeat(1000),
        },
        line: Some("\u{1b}[31m".into()),
        reason: String::new(),
    }];
    assert!(check_bot_game(&setup, p).is_err());
    let ultimatum =
        crate::discipline::ultimatum::setup(crate::discipline::ultimatum::rules::Params {
            rounds: 10,
        });
    assert_eq!(
        check_bot_game(&ultimatum, bot_game()),
        Err("the outcome of another game".into())
    );
}

/// The fuzz target `wire` starts from binary jobs of this format: they
/// must read, or the fuzzer would start from refusals only.
#[test]
fn the_fuzz_corpus_binary_jobs_read() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/wire");
    for name in ["job_knobeln.bin", "job_bots.bin"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let j = JobMessage::decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(JobMessage::decode(&j.encode()), Ok(j), "{name}");
    }
}

/// Red team G14: a worker's record may name only a failure this referee
/// makes, with this contest's figures. The wall clock never decides a game
/// (the watchdog's game is played again), and the kinds of the referee
/// that ran strategies as processes (output, a forbidden call, not
/// reading) are made by no referee of this version; a fuel or memory
/// figure not the contest's would be a sentence about another limit.
/// Before, each was taken, its sentence written, and the participant
/// blamed (a game with the wall clock's failure was even stored with its
/// throws, as one that would not replay).
#[test]
fn a_worker_cannot_blame_a_participant_with_a_failure_the_referee_never_makes() {
    let mut r = played(10, 7);
    r.throws.truncate(4);
    r.points = replay(&cfg(10).params, &r.throws).unwrap();
    let with = |kind: FailureKind| {
        let mut r = r.clone();
        r.failures = vec![Failure {
            player: 0,
            throw: 5,
            kind,
            reason: String::new(),
        }];
        r
    };
    let c = cfg(10);
    let memory_kb = c.limits.memory_bytes / 1024;
    let stack_kb = crate::wasm::CALL_STACK_BYTES as u64 / 1024;
    // What this referee makes passes.
    for kind in [
        FailureKind::Exited { status: 3 },
        FailureKind::CpuTime {
            limit_secs: 0,
            fuel: Some(c.fuel),
        },
        FailureKind::Memory {
            limit_kb: memory_kb,
            call_stack_kb: Some(stack_kb),
        },
        FailureKind::Crashed {
            signal: libc::SIGSEGV,
            trap: Some("out of bounds memory access".into()),
        },
    ] {
        assert!(check_record(&c, 7, with(kind.clone())).is_ok(), "{kind:?}");
    }
    // What it never makes is refused.
    for kind in [
        FailureKind::WallClock { limit_ms: 10_000 },
        FailureKind::Output { line: "x".into() },
        FailureKind::ForbiddenCall,
        FailureKind::NotReading,
        FailureKind::CpuTime {
            limit_secs: 1,
            fuel: None,
        },
        FailureKind::CpuTime {
            limit_secs: 0,
            fuel: Some(c.fuel / 2),
        },
        FailureKind::Memory {
            limit_kb: memory_kb / 2,
            call_stack_kb: None,
        },
        FailureKind::Crashed {
            signal: libc::SIGKILL,
            trap: None,
        },
    ] {
        assert!(check_record(&c, 7, with(kind.clone())).is_err(), "{kind:?}");
    }
}

/// Red team G14: a worker listing Q's failure before P's (the referee
/// lists P's first) has its record stored as the referee lists it, so the
/// stored record, the protocols and the results all read one order.
#[test]
fn a_workers_failures_are_stored_in_the_referees_order() {
    let mut r = played(10, 7);
    r.throws.truncate(4);
    r.points = replay(&cfg(10).params, &r.throws).unwrap();
    let failure = |player: usize| Failure {
        player,
        throw: 5,
        kind: FailureKind::Exited {
            status: player as i32,
        },
        reason: String::new(),
    };
    r.failures = vec![failure(1), failure(0)];
    let checked = check_record(&cfg(10), 7, r).unwrap();
    assert_eq!(
        checked
            .failures
            .iter()
            .map(|f| f.player)
            .collect::<Vec<_>>(),
        vec![0, 1]
    );
}

/// Red team G14: a game of all its throws is over and no referee judges a
/// throw after it; a worker naming a failure there (a participant blamed,
/// its game rescheduled or its team disqualified, after a game it played
/// to the end by the rules) is refused. Before, the failure was taken.
#[test]
fn a_worker_cannot_fail_a_player_after_the_games_last_throw() {
    let mut r = played(10, 7);
    r.failures = vec![Failure {
        player: 0,
        throw: 11,
        kind: FailureKind::Exited { status: 0 },
        reason: String::new(),
    }];
    assert!(check_record(&cfg(10), 7, r).is_err());
}

/// Red team F16: a crash's words are the engine's, never the worker's. This
/// referee gives a trap its signal and wasmtime's own sentence; a worker's
/// record with another text (any words it likes, shown to the participant
/// and in the protocols), no text, or a trap under another trap's signal
/// was taken before.
#[test]
fn a_worker_cannot_put_its_own_words_into_a_crash() {
    let mut r = played(10, 7);
    r.throws.truncate(4);
    r.points = replay(&cfg(10).params, &r.throws).unwrap();
    let with = |signal: i32, trap: Option<&str>| {
        let mut r = r.clone();
        r.failures = vec![Failure {
            player: 1,
            throw: 5,
            kind: FailureKind::Crashed {
                signal,
                trap: trap.map(str::to_string),
            },
            reason: String::new(),
        }];
        r
    };
    for (signal, trap) in [
        (libc::SIGSEGV, "out of bounds memory access"),
        (libc::SIGFPE, "integer divide by zero"),
        (libc::SIGILL, "wasm `unreachable` instruction executed"),
    ] {
        let got = check_record(&cfg(10), 7, with(signal, Some(trap)));
        assert!(got.is_ok(), "{trap}: {got:?}");
    }
    for (signal, trap) in [
        (
            libc::SIGSEGV,
            Some("your team cheated: see http://evil.example"),
        ),
        (libc::SIGSEGV, None),
        (libc::SIGFPE, Some("out of bounds memory access")),
        // The traps that are no crash: fuel, the call stack, the engine's.
        (libc::SIGSEGV, Some("all fuel consumed by WebAssembly")),
        (libc::SIGSEGV, Some("call stack exhausted")),
        (libc::SIGSEGV, Some("interrupt")),
    ] {
        assert!(
            check_record(&cfg(10), 7, with(signal, trap)).is_err(),
            "{signal} {trap:?}"
        );
    }
}

/// Red team F16: this referee finds a program unstartable only before its
/// first throw (it is loaded before the game); a worker's record of a
/// strategy that threw and then "could not be started" was taken before.
#[test]
fn a_strategy_that_threw_cannot_be_unstartable() {
    let unstartable = |n: usize| {
        let mut r = played(10, 7);
        r.throws.truncate(n);
        r.points = replay(&cfg(10).params, &r.throws).unwrap();
        r.failures = vec![Failure {
            player: 0,
            throw: n as u32 + 1,
            kind: FailureKind::Unstartable {
                error: "not a module".into(),
            },
            reason: String::new(),
        }];
        r
    };
    assert!(check_record(&cfg(10), 7, unstartable(0)).is_ok());
    for n in [1, 4, 9] {
        assert!(check_record(&cfg(10), 7, unstartable(n)).is_err(), "{n}");
    }
}

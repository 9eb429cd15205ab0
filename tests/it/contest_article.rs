//! The results article (`knobeln::contest::article`, `knobeln results`) and
//! the protocol formatter (`knobeln protocolfmt`): a real small tournament
//! written up for Usenet, hand-made results for the edge cases, and game
//! protocols in mails, plain, quoted-printable, as attachments and damaged.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use chrono::{TimeZone, Utc};

use knobeln::contest::article::{article, country_of, points_text, ArticleInput, TeamInfo};
use knobeln::engine::results::{
    results, DisqualifiedTeam, EvolutionPlaced, EvolutionResult, Generation, GroupResult, Placed,
    Results, RoundResult,
};
use knobeln::game::Params;
use knobeln::protocol::{encode, format_all, format_full, GameProtocol, ProtocolFailure, VERSION};
use knobeln::store::Store;
use knobeln::tournament::EvolutionEnd;

const BIN: &str = env!("CARGO_BIN_EXE_knobeln");

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tournament")
        .join(name)
}

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut input = child.stdin.take().unwrap();
        if let Some(bytes) = stdin {
            input.write_all(bytes).unwrap();
        }
    }
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(1994, 5, 14, 18, 30, 0).unwrap()
}

fn check_lines(a: &str) {
    for (i, l) in a.lines().enumerate() {
        assert!(
            l.chars().count() <= 76,
            "line {} has {} characters: {l:?}\n{a}",
            i + 1,
            l.chars().count()
        );
        // The signature separator "-- " is the one line with a blank at its end.
        if l != "-- " {
            assert_eq!(l, l.trim_end(), "trailing blanks in line {}", i + 1);
        }
    }
}

/// The text with every run of blanks and line breaks as one blank.
fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The article's section `title`, without its title.
fn section<'a>(a: &'a str, title: &str) -> &'a str {
    let start = a
        .find(&format!("{title}\n"))
        .unwrap_or_else(|| panic!("no section {title:?}:\n{a}"));
    let rest = &a[start + title.len() + 1..];
    let rest = rest.trim_start_matches('=').trim_start_matches('\n');
    // Up to the next section's title, or the signature.
    let end = rest
        .find("\n=====")
        .and_then(|e| rest[..e].rfind('\n'))
        .or_else(|| rest.find("\n-- \n"))
        .unwrap_or(rest.len());
    &rest[..end]
}

// ------------------------------------------------------------ the article

#[test]
fn article_of_a_real_tournament_and_the_results_command() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("strategies");
    std::fs::create_dir_all(&dir).unwrap();
    for (src, copies) in [
        ("cooperator", 2),
        ("climber", 1),
        ("follower", 1),
        ("crasher", 1),
    ] {
        let code = std::fs::read(data(&format!("{src}.c"))).unwrap();
        for i in 1..=copies {
            std::fs::write(dir.join(format!("{src}_{i}.c")), &code).unwrap();
        }
    }
    let db = tmp.path().join("k.db");
    let config = tmp.path().join("knobeln.toml");
    std::fs::write(
        &config,
        format!(
            "database = {:?}\n[contest]\naddress = \"knobeln@ira.uka.de\"\n",
            db.to_str().unwrap()
        ),
    )
    .unwrap();

    // No database yet: a clear refusal, and none is created.
    let out = run(&["results", "--config", config.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no contest database at"),
        "{}",
        text(&out.stderr)
    );
    assert!(!db.exists());
    drop(Store::open(&db).unwrap());

    // No finished tournament yet: a clear refusal.
    let out = run(&["results", "--config", config.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no finished tournament"),
        "{}",
        text(&out.stderr)
    );

    let out = run(
        &[
            "tournament",
            "--json",
            "--throws",
            "60",
            "--seed",
            "1",
            "--strategies",
            dir.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    let store = Store::open(&db).unwrap();
    let id: i64 = store
        .conn()
        .query_row(
            "SELECT id FROM tournaments WHERE state = 'finished' ORDER BY id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let r = results(&store, id, vec![]).unwrap();
    assert!(!r.winners.is_empty());
    let teams: Vec<TeamInfo> = r.rounds[0].groups[0]
        .members
        .iter()
        .enumerate()
        .map(|(i, n)| TeamInfo {
            name: n.clone(),
            organization: match i % 3 {
                0 => "University of X, Intellect City, Eggland".to_string(),
                1 => "Institut fuer Programmstrukturen und Datenorganisation, \
                      Universitaet Karlsruhe, Germany"
                    .to_string(),
                _ => "Dept. of Computer Science, Hometown,  germany ".to_string(),
            },
            members: 2,
        })
        .collect();
    let input = ArticleInput {
        results: &r,
        teams: &teams,
        contest_name: "International KNOBELN contest",
        contest_address: "knobeln@ira.uka.de",
        organizer_name: "Lutz Prechelt",
        now: now(),
    };
    let a = article(&input);
    assert_eq!(a, article(&input), "deterministic");
    check_lines(&a);

    // Headers, then an empty line.
    let (head, body) = a.split_once("\n\n").unwrap();
    let headers: Vec<&str> = head.lines().collect();
    assert!(headers.contains(&"Newsgroups: rec.games.misc,misc.misc"));
    assert!(headers.contains(&"Subject: Results of the International KNOBELN contest"));
    assert!(headers.contains(&"From: knobeln@ira.uka.de (Lutz Prechelt)"));
    assert!(headers.contains(&"Organization: International KNOBELN contest"));
    assert!(headers.contains(&"Followup-To: rec.games.misc"));
    assert!(headers.contains(&"Date: Sat, 14 May 1994 18:30:00 +0000"));

    // Introduction: date, 5 teams (10 people) from 2 countries.
    assert!(flat(body).contains("Saturday, May 14, 1994"), "{body}");
    assert!(
        flat(body).contains("5 teams (10 people) from 2 countries took part: Eggland, Germany."),
        "{body}"
    );

    // Every team of the final ranking with its place and points, on one line.
    let winners = section(&a, "The winners of the International KNOBELN contest");
    for w in &r.winners {
        let line = winners
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(w.team.as_str()))
            .unwrap_or_else(|| panic!("{} missing:\n{winners}", w.team));
        assert!(
            line.trim_start().starts_with(&format!("{}.", w.place)),
            "{line}"
        );
        assert!(line.ends_with(&points_text(w.points)), "{line}");
    }
    assert!(winners.contains("Eggland"), "{winners}");

    // The Evolution, with fractions in percent and how it ended.
    let evo = section(&a, "The winners of Knobeln Evolution");
    let e = r.evolution.as_ref().unwrap();
    for p in &e.ranking {
        assert!(
            evo.contains(&format!("{:.2} %", p.fraction * 100.0)),
            "{evo}"
        );
        assert!(evo.contains(&p.team), "{evo}");
    }
    assert!(
        flat(evo).contains("fixed point")
            || flat(evo).contains("cycle of")
            || flat(evo).contains("cap of"),
        "{evo}"
    );

    // The crasher is disqualified, with its reason.
    let dq = section(&a, "Disqualified teams");
    assert!(
        flat(dq).contains("- crasher_1 (round 1): throw 6: crashed"),
        "{dq}"
    );

    // Group results.
    let groups = section(&a, "Group results of every round");
    assert!(groups.contains("Round 1 (final)"), "{groups}");
    assert!(groups.contains("Group 1 (5 teams):"), "{groups}");
    assert!(groups.contains("disqualified: crasher_1"), "{groups}");

    // The command: teams without registration have an unknown organization;
    // one registered team shows its organization and country.
    store
        .conn()
        .execute(
            "INSERT INTO registrations (team_id, mail_address, requested_name, preferences,
                 organization, members, record, auth_salt, auth_hash, registered_at)
             SELECT id, 'c1@x.example', name, 'LAP', 'University of X, Intellect City, Eggland',
                 '[{\"line1\":\"a\",\"line2\":\"b\"},{\"line1\":\"c\",\"line2\":\"d\"}]',
                 '', x'00', x'00', '1994-03-24T00:00:00Z'
             FROM teams WHERE name = 'cooperator_1'",
            [],
        )
        .unwrap();
    drop(store);
    let out_file = tmp.path().join("article.txt");
    let out = run(
        &[
            "results",
            "--config",
            config.to_str().unwrap(),
            "--out",
            out_file.to_str().unwrap(),
            "--organizer",
            "Lutz Prechelt",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let posted = std::fs::read_to_string(&out_file).unwrap();
    check_lines(&posted);
    assert!(posted.contains("From: knobeln@ira.uka.de (Lutz Prechelt)"));
    assert!(posted.contains("Newsgroups: rec.games.misc,misc.misc"));
    assert!(
        flat(&posted).contains("from 1 country (Eggland) and 4 teams of unknown origin"),
        "{posted}"
    );
    let winners = section(&posted, "The winners of the International KNOBELN contest");
    let line = winners
        .lines()
        .find(|l| l.contains("cooperator_1"))
        .unwrap();
    assert!(line.contains("University of X"), "{winners}");
    assert!(winners.contains("unknown"), "{winners}");
    // To stdout as well, with the same sections; without --organizer the
    // contest's name stands in `From:`.
    let out = run(&["results", "--config", config.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    check_lines(&stdout);
    assert!(
        stdout.contains("\nFrom: knobeln@ira.uka.de (International KNOBELN contest)\n"),
        "{stdout}"
    );
    for s in [
        "The winners of the International KNOBELN contest",
        "The winners of Knobeln Evolution",
        "Disqualified teams",
        "Group results of every round",
    ] {
        assert_eq!(section(&stdout, s), section(&posted, s));
    }
}

fn placed(team: &str, points: f64, place: u32) -> Placed {
    Placed {
        team: team.into(),
        points,
        place,
    }
}

/// Two rounds: three groups, then a final with shared places, a long
/// organization, a disqualification and an Evolution that cycles.
fn hand_made() -> (Results, Vec<TeamInfo>) {
    let names: Vec<String> = (1..=9).map(|i| format!("team_{i}")).collect();
    let g = |n: u32, m: &[usize], ranking: Vec<Placed>| GroupResult {
        number: n,
        members: m.iter().map(|&i| names[i - 1].clone()).collect(),
        ranking,
        games: vec![],
    };
    let round1 = RoundResult {
        number: 1,
        is_final: false,
        groups: vec![
            g(
                1,
                &[1, 2, 3],
                vec![
                    placed("team_1", 300.0, 1),
                    placed("team_2", 200.5, 2),
                    placed("team_3", 100.0, 3),
                ],
            ),
            g(
                2,
                &[4, 5, 6],
                vec![
                    placed("team_4", 250.0, 1),
                    placed("team_5", 250.0, 1),
                    placed("team_6", 10.0, 3),
                ],
            ),
            g(
                3,
                &[7, 8, 9],
                vec![placed("team_7", 90.0, 1), placed("team_8", 80.0, 2)],
            ),
        ],
        advanced: ["team_1", "team_2", "team_4", "team_5", "team_7"]
            .map(String::from)
            .to_vec(),
        disqualified: vec![DisqualifiedTeam {
            team: "team_9".into(),
            reason: "throw 17: crashed (signal 11, segmentation fault); and this reason \
                     is long enough to need a second line in the article"
                .into(),
        }],
    };
    let final_ranking = vec![
        placed("team_4", 1000.0, 1),
        placed("team_1", 900.5, 2),
        placed("team_2", 800.0, 3),
        placed("team_5", 800.0, 3),
        placed("team_7", 5.0, 5),
    ];
    let round2 = RoundResult {
        number: 2,
        is_final: true,
        groups: vec![GroupResult {
            number: 1,
            members: ["team_1", "team_2", "team_4", "team_5", "team_7"]
                .map(String::from)
                .to_vec(),
            ranking: final_ranking.clone(),
            games: vec![],
        }],
        advanced: vec![],
        disqualified: vec![],
    };
    let gen = |c: [u64; 5]| Generation {
        counts: ["team_1", "team_2", "team_4", "team_5", "team_7"]
            .iter()
            .map(|s| s.to_string())
            .zip(c)
            .collect::<BTreeMap<_, _>>(),
    };
    let evolution = EvolutionResult {
        population: 25,
        exemplars_per_strategy: 5,
        generations: vec![
            gen([5, 5, 5, 5, 5]),
            gen([6, 4, 10, 5, 0]),
            gen([8, 2, 10, 5, 0]),
            gen([7, 3, 10, 5, 0]),
        ],
        end: EvolutionEnd::Cycle {
            length: 2,
            generations: vec![2, 3],
        },
        ranking: vec![
            EvolutionPlaced {
                team: "team_4".into(),
                fraction: 0.4,
                count: 10,
                place: 1,
            },
            EvolutionPlaced {
                team: "team_1".into(),
                fraction: 0.3,
                count: 7,
                place: 2,
            },
            EvolutionPlaced {
                team: "team_5".into(),
                fraction: 0.2,
                count: 5,
                place: 3,
            },
            EvolutionPlaced {
                team: "team_2".into(),
                fraction: 0.1,
                count: 3,
                place: 4,
            },
        ],
        unranked: vec!["team_7".into()],
    };
    let results = Results {
        seed: 42,
        rejected: vec![],
        rounds: vec![round1, round2],
        winners: final_ranking,
        evolution: Some(evolution),
    };
    let orgs = [
        "University of X, Intellect City, Eggland",
        "Institut fuer Programmstrukturen und Datenorganisation, Fakultaet fuer \
         Informatik, Universitaet Karlsruhe, 76128 Karlsruhe, Germany",
        "Universität Ulm, Deutschland",
        "MIT, Cambridge MA, USA",
        "Dept. of CS, Hometown, usa",
        "unknown",
        "Somewhere, Eggland",
        "Nowhere U, Farland",
        "Eggland",
    ];
    let teams = names
        .iter()
        .zip(orgs)
        .map(|(n, o)| TeamInfo {
            name: n.clone(),
            organization: o.into(),
            members: 3,
        })
        .collect();
    (results, teams)
}

#[test]
fn hand_made_results_place_sharing_wrapping_cycles_and_countries() {
    let (r, teams) = hand_made();
    let a = article(&ArticleInput {
        results: &r,
        teams: &teams,
        contest_name: "International KNOBELN contest",
        contest_address: "knobeln@contest.example",
        organizer_name: "The Organizer",
        now: now(),
    });
    check_lines(&a);
    // 9 teams; countries Eggland, Germany, Deutschland, USA (usa is the
    // same), Farland; one of unknown origin.
    assert!(
        flat(&a).contains(
            "9 teams (27 people) took part, from 5 countries (Deutschland, \
             Eggland, Farland, Germany, USA) and 1 team of unknown origin."
        ),
        "{a}"
    );

    let winners = section(&a, "The winners of the International KNOBELN contest");
    // Shared third place shown twice, half points kept.
    let thirds: Vec<&str> = winners
        .lines()
        .filter(|l| l.trim_start().starts_with("3. "))
        .collect();
    assert_eq!(thirds.len(), 2, "{winners}");
    assert!(winners.contains("900.5"), "{winners}");
    // The long organization is wrapped within its column, not lost.
    assert!(flat(winners).contains("Institut fuer"), "{winners}");
    assert!(
        flat(winners).contains("76128 Karlsruhe, Germany"),
        "{winners}"
    );
    let team_2 = winners.lines().position(|l| l.contains("team_2")).unwrap();
    let next = winners.lines().nth(team_2 + 1).unwrap();
    assert!(
        next.starts_with("        ") && !next.contains("team_"),
        "continuation line expected: {winners}"
    );
    // Columns: points right-aligned at the same end column.
    let ends: Vec<usize> = winners
        .lines()
        .filter(|l| l.contains("team_"))
        .map(|l| l.chars().count())
        .collect();
    assert!(ends.windows(2).all(|w| w[0] == w[1]), "{winners}");

    let evo = section(&a, "The winners of Knobeln Evolution");
    assert!(evo.contains("40.00 %"), "{evo}");
    assert!(evo.contains("10.00 %"), "{evo}");
    assert!(flat(evo).contains("cycle of 2 generations"), "{evo}");
    assert!(flat(evo).contains("generations 2 to 3"), "{evo}");
    assert!(evo.contains("Died out: team_7."), "{evo}");
    assert!(flat(evo).contains("3 generations computed"), "{evo}");

    let dq = section(&a, "Disqualified teams");
    assert!(dq.contains("- team_9 (round 1): throw 17: crashed"), "{dq}");
    assert!(dq.lines().count() >= 2, "wrapped reason: {dq}");

    let groups = section(&a, "Group results of every round");
    assert!(groups.contains("Round 1\n-------\n"), "{groups}");
    assert!(
        groups.contains("5 teams advanced to round 2 (marked *)"),
        "{groups}"
    );
    assert!(groups.contains("Round 2 (final)"), "{groups}");
    for t in ["team_1", "team_2", "team_4", "team_5", "team_7"] {
        let round1 = &groups[..groups.find("Round 2").unwrap()];
        let line = round1.lines().find(|l| l.contains(t)).unwrap();
        assert!(line.ends_with('*'), "{t} advanced: {line}");
    }
    let round1 = &groups[..groups.find("Round 2").unwrap()];
    for t in ["team_3", "team_6", "team_8"] {
        let line = round1.lines().find(|l| l.contains(t)).unwrap();
        assert!(!line.ends_with('*'), "{t} stayed: {line}");
    }
    assert!(round1.contains("disqualified: team_9"), "{groups}");
    let round2 = &groups[groups.find("Round 2").unwrap()..];
    assert!(!round2.contains('*'), "{round2}");
}

#[test]
fn country_of_takes_the_last_part() {
    assert_eq!(
        country_of("University of X, Intellect City, Eggland"),
        "Eggland"
    );
    assert_eq!(country_of("Universitaet Karlsruhe,Germany  "), "Germany");
    assert_eq!(country_of("Eggland"), "Eggland");
    assert_eq!(country_of(" , "), "");
}

#[test]
fn empty_results_still_make_an_article() {
    let r = Results {
        seed: 1,
        rejected: vec![],
        rounds: vec![],
        winners: vec![],
        evolution: None,
    };
    let a = article(&ArticleInput {
        results: &r,
        teams: &[],
        contest_name: "International KNOBELN contest",
        contest_address: "knobeln@contest.example",
        organizer_name: "",
        now: now(),
    });
    check_lines(&a);
    assert!(a.contains("From: knobeln@contest.example\n"), "{a}");
    assert!(a.contains("There is no final ranking"), "{a}");
    assert!(a.contains("There was no Knobeln Evolution"), "{a}");
}

// ------------------------------------------------------------ protocolfmt

fn protocol(p_name: &str, slot: u32) -> GameProtocol {
    GameProtocol {
        version: VERSION,
        players: [p_name.into(), "climbers".into()],
        round: 1,
        group: 2,
        slot,
        attempt: 1,
        seed: 8427345982374,
        params: Params::default(),
        points: [0, 0],
        throws: (0..40).map(|i| [100 + i, 12288 - i * 7]).collect(),
        failures: vec![ProtocolFailure {
            player: 0,
            throw: 41,
            reason: "throw 41: threw 20000, outside the allowed range 1..12288 (rule 1)".into(),
        }],
    }
}

/// Quoted-printable with soft line breaks every 40 characters (so protocol
/// lines are broken too) and `=HH` for `=` and non-ASCII.
fn qp(text: &str) -> String {
    let mut out = String::new();
    for line in text.split('\n') {
        let mut col = 0;
        for b in line.bytes() {
            let piece = if b == b'=' || b >= 0x80 {
                format!("={b:02X}")
            } else {
                (b as char).to_string()
            };
            if col + piece.len() > 40 {
                out.push_str("=\n");
                col = 0;
            }
            col += piece.len();
            out.push_str(&piece);
        }
        out.push('\n');
    }
    out
}

fn mail(headers_extra: &str, body: &str) -> String {
    format!(
        "Return-Path: <knobeln@ira.uka.de>\n\
         From: knobeln@ira.uka.de\n\
         To: team@example.org\n\
         Subject: KNOBELN: game protocols of round 1, group 2\n\
         Date: Sat, 14 May 1994 18:30:00 +0200\n\
         MIME-Version: 1.0\n\
         {headers_extra}\n{body}"
    )
}

#[test]
fn protocolfmt_reads_protocols_alone_in_mails_and_quoted_printable() {
    let one = protocol("the_heavy_lords_of_knobeln", 17);
    let two = protocol("Grüße=aus Karlsruhe", 18);
    let body = format!(
        "Grüße = greetings, here are the protocols of your games:\n\n{}\n\
         and the second one:\n\n{}\n-- \nThe KNOBELN contest\n",
        encode(&one),
        encode(&two)
    );
    let want_one = format_full(&one);
    let want_both = format_all(&[one.clone(), two.clone()]);

    // A bare protocol, on stdin and from a file.
    let out = run(&["protocolfmt"], Some(encode(&one).as_bytes()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want_one);
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("p.txt");
    std::fs::write(&f, encode(&one)).unwrap();
    let out = run(&["protocolfmt", f.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want_one);

    // A plain 8-bit mail with two protocols, LF and CRLF.
    let plain = mail(
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n",
        &body,
    );
    for m in [plain.clone(), plain.replace('\n', "\r\n")] {
        let out = run(&["protocolfmt"], Some(m.as_bytes()));
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), want_both);
    }

    // Quoted-printable, with soft line breaks inside protocol lines.
    let encoded = qp(&body);
    assert!(encoded.contains("=\n"));
    let qp_mail = mail(
        "Content-Type: text/plain; charset=utf-8\n\
         Content-Transfer-Encoding: quoted-printable\n",
        &encoded,
    );
    for m in [qp_mail.clone(), qp_mail.replace('\n', "\r\n")] {
        let out = run(&["protocolfmt"], Some(m.as_bytes()));
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), want_both);
    }
    // The same mail quoted in a reply (no MIME around it any more).
    let quoted: String = qp_mail.lines().map(|l| format!("> {l}\n")).collect();
    let reply = format!("Hi Lutz, what happened here?\n\n{quoted}");
    let out = run(&["protocolfmt"], Some(reply.as_bytes()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want_both);

    // A multipart mail with the protocol as a base64 attachment.
    let b64 = base64(encode(&one).as_bytes());
    let multipart = mail(
        "Content-Type: multipart/mixed; boundary=\"XYZ\"\n",
        &format!(
            "--XYZ\nContent-Type: text/plain\n\nSee the attachment.\n\
             --XYZ\nContent-Type: text/plain; name=\"game.txt\"\n\
             Content-Disposition: attachment; filename=\"game.txt\"\n\
             Content-Transfer-Encoding: base64\n\n{b64}\n--XYZ--\n"
        ),
    );
    let out = run(&["protocolfmt"], Some(multipart.as_bytes()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want_one);
}

#[test]
fn protocolfmt_refuses_damaged_and_missing_protocols() {
    let p = protocol("alpha", 3);
    let text_ok = encode(&p);
    let damaged = text_ok.replacen("team Q climbers", "team Q climbera", 1);
    assert_ne!(damaged, text_ok);
    let m = mail("Content-Type: text/plain\n", &format!("Look:\n\n{damaged}"));
    let out = run(&["protocolfmt"], Some(m.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(
        err.contains("damaged protocol") && err.contains("checksum"),
        "{err}"
    );

    // Truncated: the end line is missing.
    let cut: String = text_ok.lines().take(6).map(|l| format!("{l}\n")).collect();
    let out = run(&["protocolfmt"], Some(cut.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("truncated"),
        "{}",
        text(&out.stderr)
    );

    // One good and one damaged protocol: the whole input is refused.
    let both = format!("{text_ok}\n{damaged}");
    let out = run(&["protocolfmt"], Some(both.as_bytes()));
    assert_eq!(out.status.code(), Some(1));

    // Nothing at all.
    let m = mail("Content-Type: text/plain\n", "Just a greeting.\n");
    let out = run(&["protocolfmt"], Some(m.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no KNOBELN protocol found"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["protocolfmt"], Some(b""));
    assert_eq!(out.status.code(), Some(1));
}

fn base64(bytes: &[u8]) -> String {
    crate::common::base64_lines(bytes, "\n")
}

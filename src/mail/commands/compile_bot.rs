//! `please compile` in a bot discipline (`[contest] discipline` other than
//! knobeln): the bot's source in any language of `knobeln languages`.
//!
//! How a participant sends a bot (the book, docs/src/participant/bots.md, "Sending a bot by mail"):
//! - the source as **one attachment** whose file name's extension says the
//!   language (`bot.py`, `Bot.java`, `bot.c`), or as the **mail body**,
//!   whose first line is then `language: NAME` (that line is not part of
//!   the source). A `language:` line in the body also overrides the
//!   extension of an attachment.
//! - the line `<<FROM>> team_name authentification_string` either in the
//!   mail body or in a comment among the first lines of the source (any
//!   comment syntax: `# <<FROM>> …`, `// <<FROM>> …`, `/* <<FROM>> … */`).
//!   Once verified, the string is masked in the source before it is built
//!   or stored, as for KNOBELN strategies.
//!
//! The bot is built in the compile jail and plays the discipline's trial
//! ([`crate::discipline::trial`]); the report mail says how the language
//! was decided, what the compiler said, and the trial's findings. An
//! accepted bot becomes the team's current version (a row of
//! `strategy_versions` whose `binary` is the built program as JSON, with
//! its discipline and language in `bot_programs`).
//!
//! [`prepare`] is the slow part (build, trial) outside any transaction;
//! [`commit`] stores it and returns the reply inside the caller's.

use rusqlite::{params, Connection};
use serde_json::json;

use super::context::Budget;
use super::context::{date, Ctx, Effect};
use super::prepared::{CompileCommandError, Prepared};
use crate::discipline::bots::{build_bot, Built, Source};
use crate::discipline::trial::trial;
use crate::engine::prepare::sha256_hex;
use crate::lang::build::{BotProgram, BuildLimits};
use crate::lang::{language_line, Toolchains};
use crate::mail::message::{cut_signature, Body, Inbound};
use crate::mail::texts::render;
use crate::store::mail as db;
use crate::store::{NewVersion, Store};

pub use super::prepared::PreparedBot;

/// The bot's source and how its language is said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotSource {
    pub file_name: Option<String>,
    pub declared: Option<String>,
    pub text: String,
}

/// Finds the source in a mail: one attachment with a file name, else the
/// body (its first line `language: NAME`). The error is a sentence.
pub fn bot_source(m: &Inbound) -> Result<BotSource, String> {
    let body = match &m.body {
        Body::Text(t) => Some(t.replace("\r\n", "\n")),
        _ => None,
    };
    let named: Vec<_> = m
        .attachments
        .iter()
        .filter(|a| a.filename.as_deref().is_some_and(|f| !f.trim().is_empty()))
        .collect();
    match named.as_slice() {
        [a] => {
            if a.over_limit {
                return Err(format!(
                    "the attachment has {} bytes, more than this server accepts",
                    a.size
                ));
            }
            if a.damaged {
                return Err("the attachment could not be decoded (was the mail cut off?)".into());
            }
            let text = String::from_utf8_lossy(&a.bytes).replace("\r\n", "\n");
            if text.trim().is_empty() {
                return Err("the attached file is empty".into());
            }
            Ok(BotSource {
                file_name: a.filename.as_ref().map(|f| f.trim().to_string()),
                declared: body.as_deref().and_then(language_line),
                text,
            })
        }
        [] => {
            let Some(body) = body else {
                return Err("the mail has no plain-text body and no attached source file".into());
            };
            let body = cut_signature(&body);
            // The `<<FROM>>` line is the mail's, not the source's: it may
            // stand before the language line or right after it (where the
            // help mail shows it), and is never compiled.
            let mut lines = body
                .lines()
                .skip_while(|l| l.trim().is_empty() || is_from_line(l));
            let first = lines.next().unwrap_or("");
            let declared = language_line(first);
            let Some(declared) = declared else {
                return Err(
                    "the source in the mail body must start with a line \"language: \
                     NAME\" that says its language (the line \"<<FROM>> team_name \
                     authentification_string\" may stand before or after it)"
                        .into(),
                );
            };
            let text: String = lines
                .skip_while(|l| l.trim().is_empty() || is_from_line(l))
                .map(|l| format!("{l}\n"))
                .collect();
            if text.trim().is_empty() {
                return Err("the mail body holds no source after its language line".into());
            }
            Ok(BotSource {
                file_name: None,
                declared: Some(declared),
                text,
            })
        }
        several => Err(format!(
            "the mail has {} attached files; send exactly one source file",
            several.len()
        )),
    }
}

/// Whether `line` is a mail's `<<FROM>> team_name auth` line (not a
/// comment of the source that holds one).
fn is_from_line(line: &str) -> bool {
    line.trim_start().starts_with("<<FROM>>")
}

/// The team name and authentification string a bot mail claims: from the
/// body's `<<FROM>>` line (the body is the source's mail), else from the
/// source's first 30 lines (a comment). Returns (team, auth).
pub fn claimed(mail: &Inbound, source: &BotSource) -> Option<(String, String)> {
    from_line(mail.body.text(), &source.text)
}

/// The `<<FROM>> team auth` line: in the body, else in the source's first
/// 30 lines. Returns (team, auth).
pub fn from_line(body: Option<&str>, source: &str) -> Option<(String, String)> {
    let find = |text: &str, max: usize| {
        text.lines().take(max).find_map(|l| {
            let rest = &l[l.find("<<FROM>>")? + "<<FROM>>".len()..];
            let mut words = rest
                .split_whitespace()
                .filter(|w| !matches!(*w, "*/" | "-->" | "#" | "--"));
            let team = words.next()?.to_string();
            let auth = words.next()?.trim_end_matches("*/").to_string();
            (!auth.is_empty()).then_some((team, auth))
        })
    };
    body.and_then(|b| find(b, 2000))
        .or_else(|| find(source, 30))
}

/// Checks the source, the `<<FROM>>` line, authentication and the rate
/// limit; then builds the bot and plays the trial.
pub fn prepare(store: &Store, ctx: &Ctx<'_>) -> Result<Prepared, CompileCommandError> {
    let d = ctx.config.contest.discipline;
    let refuse = |reason: String, hint: Option<String>, outcome: &str| {
        Ok(Prepared::Refused {
            reason,
            hint,
            outcome: outcome.to_string(),
        })
    };
    if crate::store::mail::contest_started(store.conn(), d)? {
        return refuse(
            "The compilation service is closed: the contest has started, and the \
             service is disabled during the tournament. The latest version you sent \
             before the start is the one that plays."
                .into(),
            None,
            "compile service closed (contest running)",
        );
    }
    let mut source = match bot_source(ctx.mail) {
        Ok(s) => s,
        Err(problem) => {
            return refuse(
                format!("The mail holds no usable bot: {problem}."),
                Some(format!(
                    "Attach your bot for {} as one file whose name ends in its \
                     language's extension (for example bot.py or bot.c), or put the \
                     source into the body of a plain-text mail after a first line \
                     \"language: NAME\".",
                    d.title()
                )),
                "no usable bot source",
            )
        }
    };
    let Some((team, auth)) = claimed(ctx.mail, &source) else {
        return refuse(
            "The mail does not say which team it is from: there is no line \
             \"<<FROM>> team_name authentification_string\"."
                .into(),
            Some(
                "Write that line into the mail body, or into a comment among the first \
                 lines of your source, exactly as in the registration acknowledgement."
                    .into(),
            ),
            "no <<FROM>> line",
        );
    };
    let Some(reg) = super::context::authenticate(store.conn(), &team, &auth)? else {
        let why = super::context::auth_refusal(store.conn(), ctx.config, &team, &auth)?;
        return refuse(why.what, Some(why.hint), "authentication failed");
    };
    // Authenticated: from here on the string is masked, so it reaches
    // neither the built program (an interpreted bot's program is its
    // source: stored, and handed to workers on other machines) nor the
    // stored source, the build's messages or the report.
    source.text = crate::mail::secrets::mask_text(&source.text, &auth);
    if let Some((reason, outcome)) =
        super::context::past_hourly_limits(store.conn(), ctx, reg.team)?
    {
        return refuse(reason, None, outcome);
    }
    // The seed's cap on improvements (the flooding island: five): checked
    // before anything is built, so a team past it costs nothing.
    let cap = crate::discipline::registry::of(d).and_then(|b| b.revisions(&ctx.config.sections()));
    if let Some(revisions) = cap {
        let accepted = accepted_versions(store.conn(), reg.team, d)?;
        if accepted > u64::from(revisions) {
            return refuse(
                format!(
                    "Your team has sent its bot and improved it {revisions} time{} since, \
                     as often as the rules of {} allow until the deadline. The version \
                     you sent last stays the one that plays.",
                    if revisions == 1 { "" } else { "s" },
                    d.title()
                ),
                Some(
                    "The cap keeps teams from trying out strategies on the server; \
                     try yours at home with the kit's referee (send a mail with the \
                     subject \"send kit\")."
                        .into(),
                ),
                "revisions used up",
            );
        }
    }
    let table = match ctx.config.languages() {
        Ok(t) => t,
        Err(e) => {
            return Ok(Prepared::Failed {
                team: reg.team,
                team_name: reg.team_name,
                problem: e,
            })
        }
    };
    let lang = crate::lang::choose(
        &table,
        source.file_name.as_deref(),
        source.declared.as_deref(),
    );
    let names: Vec<&str> = lang.iter().map(|c| c.language.as_str()).collect();
    let toolchains = Toolchains::resolve_only(&table, &names);
    let built = build_bot(
        &table,
        &toolchains,
        Source {
            file_name: source.file_name.as_deref(),
            declared: source.declared.as_deref(),
            bytes: source.text.as_bytes(),
        },
        &BuildLimits::default(),
    );
    let built = match built {
        Ok(b) => b,
        Err(e) => {
            return Ok(Prepared::Failed {
                team: reg.team,
                team_name: reg.team_name,
                problem: e.to_string(),
            })
        }
    };
    // The steps; the one verdict line goes above them.
    let mut report = String::new();
    let (program, language, build_json) = match built {
        Built::Refused { why, report: r } => {
            match &r {
                Some(r) => report.push_str(&r.text()),
                None => report.push_str(&format!("- {why}\n")),
            }
            let lang = r.as_ref().map(|r| r.language.clone()).unwrap_or_default();
            (None, lang, serde_json::to_value(&r).unwrap_or_default())
        }
        Built::Ready {
            toolchain,
            program,
            report: r,
        } => {
            report.push_str(&r.text());
            let seed =
                u64::from_str_radix(&sha256_hex(source.text.as_bytes())[..15], 16).unwrap_or(1);
            match trial(
                ctx.config.contest.discipline,
                &ctx.config.sections(),
                (&toolchain, &program),
                seed,
            ) {
                Ok(t) => {
                    report.push_str(if t.passed {
                        "\nTrial: passed\n"
                    } else {
                        "\nTrial: failed\n"
                    });
                    for l in &t.lines {
                        report.push_str(&format!("- {l}\n"));
                    }
                    let lang = program.language.clone();
                    (
                        t.passed.then_some(program),
                        lang,
                        serde_json::to_value(&r).unwrap_or_default(),
                    )
                }
                Err(e) => {
                    return Ok(Prepared::Failed {
                        team: reg.team,
                        team_name: reg.team_name,
                        problem: e.to_string(),
                    })
                }
            }
        }
    };
    let verdict = if program.is_some() {
        "ACCEPTED: it was built and passed its trial game."
    } else if report.contains("\nTrial: failed") {
        "REJECTED: it was built but failed its trial game (below); fix that and send it again."
    } else {
        "REJECTED: it could not be built (below); fix that and send it again."
    };
    let report = format!(
        "Discipline: {}\nResult: {verdict}\n\n{}",
        d.title(),
        report.trim_start_matches('\n')
    );
    let report_json = json!({
        "discipline": d,
        "bot": true,
        "accepted": program.is_some(),
        "build": build_json,
        "text": report,
    })
    .to_string();
    Ok(Prepared::Bot(Box::new(PreparedBot {
        team: reg.team,
        team_name: reg.team_name,
        team_address: reg.mail_address,
        source: source.text.into_bytes(),
        language,
        program,
        report_text: report,
        report_json,
    })))
}

/// Stores a built bot and returns the report mail.
/// The team's accepted versions of bots of discipline `d`.
fn accepted_versions(
    conn: &Connection,
    team: crate::tournament::TeamId,
    d: crate::discipline::Discipline,
) -> Result<u64, crate::store::StoreError> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM strategy_versions v JOIN bot_programs b ON b.version_id = v.id \
         WHERE v.team_id = ?1 AND v.accepted = 1 AND b.discipline = ?2",
        params![team.0, d.name()],
        |r| r.get(0),
    )?;
    Ok(n as u64)
}

pub fn commit(
    conn: &Connection,
    ctx: &Ctx<'_>,
    b: PreparedBot,
) -> Result<Effect, CompileCommandError> {
    let sha = sha256_hex(&b.source);
    let program_bytes = b.program.as_ref().map(BotProgram::encode);
    let version = crate::store::insert_version_conn(
        conn,
        &NewVersion {
            team: b.team,
            source: &b.source,
            source_sha256: &sha,
            binary: program_bytes.as_deref(),
            lexical_elements: None,
            description: None,
            report_json: &b.report_json,
        },
        ctx.now,
    )?;
    conn.execute(
        "INSERT INTO bot_programs (version_id, discipline, language) VALUES (?1, ?2, ?3)",
        params![version.0, ctx.config.contest.discipline.name(), b.language],
    )
    .map_err(crate::store::StoreError::from)?;
    db::insert_compile_request(conn, b.team, Some(version.0), ctx.now)?;
    if b.program.is_some() {
        // Only the program that plays is kept (and those a running contest
        // plays): a team's stored programs are bounded by its language's
        // `program_kb`, however often it sends. The sources stay; a
        // superseded accepted version keeps an empty program (the schema
        // wants one for every accepted version).
        conn.execute(
            "UPDATE strategy_versions SET binary = X''
              WHERE team_id = ?1 AND id <> ?2 AND length(binary) > 0
                AND id IN (SELECT version_id FROM bot_programs)
                AND id NOT IN (
                    SELECT json_extract(e.value, '$[1]')
                      FROM bot_contests c, json_each(c.entries) e
                     WHERE c.state = 'running')",
            params![b.team.0, version.0],
        )
        .map_err(crate::store::StoreError::from)?;
    }
    let has_current = db::current_version(conn, b.team)?.is_some();
    let accepted = b.program.is_some();
    let d = ctx.config.contest.discipline;
    let mut report_text = b.report_text.clone();
    if let (true, Some(revisions)) = (
        accepted,
        crate::discipline::registry::of(d).and_then(|s| s.revisions(&ctx.config.sections())),
    ) {
        let used = accepted_versions(conn, b.team, d)?.saturating_sub(1);
        let left = u64::from(revisions).saturating_sub(used);
        report_text.push_str(&format!(
            "\nImprovements: {used} of {revisions} used; you may send {left} more \
             accepted version{} until the deadline.\n",
            if left == 1 { "" } else { "s" }
        ));
    }
    let body = render(
        "compile_report",
        &json!({
            "team": b.team_name,
            "received": date(ctx.now),
            "accepted": accepted,
            "has_current": has_current,
            "program": "bot",
            "report": report_text,
        }),
    )?;
    let mut to = vec![b.team_address.clone()];
    if !ctx.reply_to.eq_ignore_ascii_case(&b.team_address) {
        to.push(ctx.reply_to.clone());
    }
    let verdict = if accepted { "accepted" } else { "REJECTED" };
    Ok(Effect {
        budget: Budget::Team(b.team),
        state: "done",
        outcome: format!("team {}: bot version {} {verdict}", b.team_name, version.0),
        replies: vec![ctx.reply_to_addresses(
            "compile_report",
            to,
            format!(
                "{} compilation report: {verdict} (team {})",
                ctx.config.contest.name, b.team_name
            ),
            body,
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_from_line_is_found_in_any_comment_syntax() {
        for src in [
            "# <<FROM>> Owls s3cret\nprint(1)\n",
            "// <<FROM>> Owls s3cret\n",
            "/* <<FROM>> Owls s3cret */\n",
            "/* <<FROM>> Owls s3cret*/\n",
        ] {
            assert_eq!(
                from_line(None, src),
                Some(("Owls".into(), "s3cret".into())),
                "{src}"
            );
        }
        assert_eq!(from_line(None, "<<FROM>> Owls\n"), None);
        let body = "hello\n<<FROM>> Cats abc\n";
        assert_eq!(
            from_line(Some(body), "# <<FROM>> Owls s3cret"),
            Some(("Cats".into(), "abc".into()))
        );
    }
}

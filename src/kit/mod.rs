//! The participant kit: the files a participant gets by mail for
//! "SEND knobelnsoftware" (announcement, "Software").
//!
//! All files are embedded into the binary: the contest runtime
//! (`knobellib.h`, `knobellib.c`) and the 1994 `example.c` straight from
//! `src/runtime/`, so the kit always carries the runtime the server links
//! with; the 1994 announcement verbatim (`RULES-1994.txt`, for history);
//! a local referee
//! (`referee.c`) and the protocol formatter (`protocolfmt.c`), both plain C
//! that participants build with `gcc -O2 -o referee referee.c`; and a
//! `README` (what each file is, how to build and play, the game protocol
//! format of [`crate::protocol`]).
//!
//! `referee.c` plays like [`crate::referee`] (same player seeds, rules,
//! limits, failures and sentences) and writes what [`crate::protocol::encode`]
//! writes; `protocolfmt.c` prints what [`crate::protocol::format_full`]
//! prints. The two C files share one part, byte for byte (between the
//! `shared part` markers); the integration tests check all of this.
//!
//! `RULES.txt`, the participant's rules, is rendered from the contest's
//! configuration ([`rules_text`], template `templates/kit/RULES.txt.hbs`):
//! the announcement's wording where it still holds, with this contest's
//! dates, addresses, limits, a, b, k, L and exemplars. [`files_for`] is the
//! kit as mailed: the static files with `RULES.txt` second.
//!
//! This module only hands out the files. It does not send mail (the mail
//! front end attaches them) and does not build anything.

/// One file of the kit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KitFile {
    /// File name, as the participant saves it.
    pub name: &'static str,
    /// MIME type for a mail attachment. Every kit file is 7-bit text.
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

/// The command that builds a strategy with the runtime, as the README and
/// `knobellib.h` document it.
pub const BUILD_COMMAND: &str = "gcc -O2 -ffreestanding -fno-builtin -nostdinc \
     -fno-stack-protector -fno-pie -fno-pic -static -nostdlib -nostartfiles -no-pie \
     -o mine mine.c knobellib.c -lgcc";

/// The commands that build a strategy's WebAssembly module as the
/// contest does (the README documents them; `*` stands for clang's
/// version folder).
pub const WASM_BUILD_COMMANDS: [&str; 2] = [
    "clang --target=wasm32 -mcpu=mvp -O2 -ffreestanding -fno-builtin -nostdinc -nostdlib \
     -c mine.c knobellib.c",
    "wasm-ld --no-entry --export=main --initial-memory=1048576 --max-memory=1048576 \
     -z stack-size=65536 --stack-first --strip-all -o mine.wasm mine.o knobellib.o \
     /usr/lib/llvm-14/lib/clang/14*/lib/wasi/libclang_rt.builtins-wasm32.a",
];

const TEXT: &str = "text/plain; charset=us-ascii";

/// Every file of the kit, README first.
pub fn files() -> Vec<KitFile> {
    let f = |name, bytes: &'static str| KitFile {
        name,
        content_type: TEXT,
        bytes: bytes.as_bytes(),
    };
    vec![
        f("README", include_str!("README")),
        f("RULES-1994.txt", include_str!("RULES-1994.txt")),
        f("knobellib.h", include_str!("../runtime/knobellib.h")),
        f("knobellib.c", include_str!("../runtime/knobellib.c")),
        f("example.c", include_str!("../runtime/example.c")),
        f("referee.c", include_str!("referee.c")),
        f("protocolfmt.c", include_str!("protocolfmt.c")),
    ]
}

/// A kit file as mailed (the rendered ones own their bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedKitFile {
    pub name: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// `RULES.txt`: the rules of the contest `config` describes, in the words
/// of the announcement where they still hold (7-bit, 72 columns).
pub fn rules_text(config: &crate::config::Config) -> String {
    use crate::mail::commands::context::date;
    use crate::toolchain::compile::CompileConfig;
    use crate::toolchain::source::tolerated_description_lines;
    let r = &config.rules;
    let t = &config.timeline;
    let compile = CompileConfig::default();
    let minutes = t.compile_closes_before_minutes;
    let compile_closes = if minutes % 60 == 0 {
        match minutes / 60 {
            1 => "one hour".to_string(),
            h => format!("{h} hours"),
        }
    } else {
        format!("{minutes} minutes")
    };
    let data = serde_json::json!({
        "contest_name": config.contest.name,
        "contest_address": config.contest.address,
        "organizer": config.contest.organizer,
        "a": r.a, "b": r.b, "k": r.k, "throws": r.throws,
        "fuel": r.fuel, "memory_kb": r.memory_kb,
        "wall_secs": if r.wall_secs.fract() == 0.0 {
            format!("{:.0}", r.wall_secs)
        } else {
            r.wall_secs.to_string()
        },
        "exemplars": r.exemplars, "max_generations": r.max_generations,
        "max_lexical_elements": compile.max_lexical_elements,
        "min_description_lines": compile.min_description_lines,
        "tolerated_description_lines": tolerated_description_lines(compile.min_description_lines),
        "rsm_pause_minutes": r.rsm_pause_minutes,
        "registration_start": date(t.registration_start),
        "compile_start": date(t.compile_start),
        "registration_deadline": date(t.registration_deadline),
        "compile_end": date(t.compile_end()),
        "contest_start": date(t.contest_start),
        "compile_closes": compile_closes,
    });
    crate::mail::texts::render("kit_rules", &data).expect("the rules template renders")
}

/// The kit as mailed for `config`: README, the rendered `RULES.txt`, then
/// the other files.
pub fn files_for(config: &crate::config::Config) -> Vec<OwnedKitFile> {
    let own = |f: KitFile| OwnedKitFile {
        name: f.name.to_string(),
        content_type: f.content_type.to_string(),
        bytes: f.bytes.to_vec(),
    };
    let mut out: Vec<OwnedKitFile> = Vec::new();
    let mut rest = files().into_iter();
    out.extend(rest.next().map(own));
    out.push(OwnedKitFile {
        name: "RULES.txt".into(),
        content_type: TEXT.into(),
        bytes: rules_text(config).into_bytes(),
    });
    out.extend(rest.map(own));
    out
}

/// The data of a bot discipline's `RULES.txt` and `README`: the contest,
/// its dates and languages, and the discipline's section of the config.
pub fn bot_kit_data(config: &crate::config::Config) -> serde_json::Value {
    use crate::mail::commands::context::date;
    let t = &config.timeline;
    let languages: Vec<serde_json::Value> = config
        .languages()
        .map(|table| {
            table
                .languages
                .iter()
                .map(|l| {
                    serde_json::json!({
                        "name": l.name,
                        "extensions": l.extensions.iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(" "),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut data = serde_json::json!({
        "contest_name": config.contest.name,
        "contest_address": config.contest.address,
        "organizer": config.contest.organizer,
        "registration_deadline": date(t.registration_deadline),
        "contest_start": date(t.contest_start),
        "languages": languages,
        "discipline": config.contest.discipline.title(),
    });
    let section = crate::discipline::registry::of(config.contest.discipline)
        .map(|b| {
            let mut v = b.kit_data(&config.sections());
            // The wall clock each bot may be waited for in one match (the
            // home referee's --match-secs).
            v["waited_secs"] = b.limits(&config.sections()).waited_secs.into();
            v
        })
        .unwrap_or_else(|| serde_json::json!({}));
    if let (Some(d), Some(s)) = (data.as_object_mut(), section.as_object()) {
        for (k, v) in s {
            d.insert(k.clone(), v.clone());
        }
    }
    data
}

/// The kit of a bot discipline as mailed for `config`: `README`,
/// `RULES.txt` (the game, the protocol, the limits and the tournament,
/// rendered from the config), `referee.py`, the demo bots, and for the
/// flooding island its islands (`island-NAME.txt`).
pub fn bot_files_for(config: &crate::config::Config) -> Vec<OwnedKitFile> {
    let d = config.contest.discipline;
    let seam = crate::discipline::registry::of(d).expect("a bot discipline's kit");
    let data = bot_kit_data(config);
    let text = |name: &str, bytes: Vec<u8>| OwnedKitFile {
        name: name.to_string(),
        content_type: TEXT.into(),
        bytes,
    };
    let bots = seam.demo_bots();
    let mut readme_data = data.clone();
    if readme_data.get("islands").is_none() {
        readme_data["islands"] = serde_json::json!([]);
    }
    readme_data["bots"] = bots.iter().map(|b| b.file).collect::<Vec<_>>().into();
    readme_data["first_bot"] = bots
        .iter()
        .find(|b| b.file.ends_with(".py"))
        .map(|b| b.file)
        .unwrap_or("")
        .into();
    readme_data["referee_args"] = seam.kit_example_args().into();
    let mut out = vec![
        text(
            "README",
            crate::mail::texts::render("kit_bot_readme", &readme_data)
                .expect("the kit README renders")
                .into_bytes(),
        ),
        text(
            "RULES.txt",
            match seam.rules_template() {
                crate::discipline::seam::RulesTemplate::Named(name) => {
                    crate::mail::texts::render(name, &data)
                }
                crate::discipline::seam::RulesTemplate::Text(text) => {
                    crate::mail::texts::render_text(text, &data)
                }
            }
            .expect("the rules render")
            .into_bytes(),
        ),
        text("referee.py", seam.referee_py().as_bytes().to_vec()),
    ];
    for b in bots {
        out.push(text(b.file, b.source.as_bytes().to_vec()));
    }
    for (name, t) in seam.kit_files(&config.sections()) {
        out.push(text(&name, t.into_bytes()));
    }
    out
}

/// The kit file called `name`, if there is one.
pub fn file(name: &str) -> Option<KitFile> {
    files().into_iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_files_are_mail_safe_text() {
        let fs = files();
        for (i, f) in fs.iter().enumerate() {
            assert!(fs[..i].iter().all(|g| g.name != f.name), "{}", f.name);
            assert!(!f.bytes.is_empty(), "{}", f.name);
            assert!(
                f.bytes
                    .iter()
                    .all(|&b| b == b'\n' || (0x20..0x7f).contains(&b)),
                "{} must be printable 7-bit ASCII",
                f.name
            );
        }
        assert_eq!(file("referee.c").map(|f| f.name), Some("referee.c"));
        assert!(file("nothing").is_none());
    }

    #[test]
    fn the_rules_are_this_contests() {
        let mut config = crate::config::Config::default();
        config.rules.k = 6;
        config.rules.throws = 500;
        config.rules.fuel = 3_000_000;
        config.rules.exemplars = 7;
        config.contest.address = "knobeln@example.org".into();
        let rules = rules_text(&config);
        assert!(
            rules.contains("a = 1, b = 12288, k = 6, L = 500"),
            "{rules}"
        );
        assert!(rules.contains("To: knobeln@example.org\nSubject: please compile"));
        assert!(rules.contains("7 exemplars of each strategy"));
        assert!(rules.contains("it has 3000000 per game"), "{rules}");
        assert!(!rules.contains("ira.uka.de") && !rules.contains("ftp"));
        assert!(rules.contains("RULES-1994.txt"));
        for l in rules.lines() {
            assert!(l.is_ascii() && l.len() <= 72 && l == l.trim_end(), "{l:?}");
        }
        let kit = files_for(&config);
        let names: Vec<&str> = kit.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(&names[..3], ["README", "RULES.txt", "RULES-1994.txt"]);
    }
}

//! Choosing a submission's language ([`choose`]): from a `language:`
//! line ([`language_line`]) or the file name, saying what it assumed.
//!
//! Not here: building the submission (`build.rs`).

use super::table::LanguageTable;

/// Which language a submission is in, and how that was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub language: String,
    /// For the report, e.g. "Python 3, from the file name bot.py".
    pub assumed: String,
}

/// The `language:` line of a mail text: the first line that starts with
/// `language:` (any case), its value trimmed.
pub fn language_line(text: &str) -> Option<String> {
    text.lines().take(2000).find_map(|l| {
        let l = l.trim_start();
        let (key, value) = l.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case("language")
            .then(|| value.trim().chars().take(40).collect())
    })
}

/// Decides the language of a submission from an explicit `language:` value
/// (which wins) or the file name's extension. The error is a sentence for
/// the participant.
pub fn choose(
    table: &LanguageTable,
    file_name: Option<&str>,
    declared: Option<&str>,
) -> Result<Choice, String> {
    let known = || {
        table
            .languages
            .iter()
            .map(|l| format!("{} (.{})", l.name, l.extensions.join(", .")))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let by_ext = file_name.and_then(|f| {
        let ext = f.rsplit_once('.')?.1.to_ascii_lowercase();
        table
            .languages
            .iter()
            .find(|l| l.extensions.iter().any(|e| e.eq_ignore_ascii_case(&ext)))
    });
    if let Some(word) = declared {
        let w: String = word
            .to_ascii_lowercase()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let found = table.languages.iter().find(|l| {
            l.name == w
                || l.aliases.iter().any(|a| a.eq_ignore_ascii_case(&w))
                || l.extensions.iter().any(|e| e.eq_ignore_ascii_case(&w))
                || l.title
                    .to_ascii_lowercase()
                    .split_whitespace()
                    .next()
                    .is_some_and(|t| t == w)
        });
        return match found {
            None => Err(format!(
                "the line \"language: {word}\" names no language this contest knows; \
                 write one of: {}",
                known()
            )),
            Some(l) => {
                let mut assumed = format!("{}, from the line \"language: {word}\"", l.title);
                if let (Some(f), Some(e)) = (file_name, by_ext) {
                    if e.name != l.name {
                        assumed.push_str(&format!(
                            " (the file name {f} would have meant {}; the line wins)",
                            e.title
                        ));
                    }
                }
                Ok(Choice {
                    language: l.name.clone(),
                    assumed,
                })
            }
        };
    }
    match (file_name, by_ext) {
        (Some(f), Some(l)) => Ok(Choice {
            language: l.name.clone(),
            assumed: format!("{}, from the file name {f}", l.title),
        }),
        (Some(f), None) => Err(format!(
            "the file name {f} does not say the language; rename the file or add a line \
             \"language: NAME\" to the mail. Known: {}",
            known()
        )),
        (None, _) => Err(format!(
            "the language is not said; attach the source as a file with its extension \
             or add a line \"language: NAME\" to the mail. Known: {}",
            known()
        )),
    }
}

//! The participant kit: the files a participant gets by mail for
//! "SEND knobelnsoftware" (announcement, "Software").
//!
//! All files are embedded into the binary: the contest runtime
//! (`knobellib.h`, `knobellib.c`) and the 1994 `example.c` straight from
//! `src/runtime/`, so the kit always carries the runtime the server links
//! with; the announcement's rules (`RULES.txt`); a local referee
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
        f("RULES.txt", include_str!("RULES.txt")),
        f("knobellib.h", include_str!("../runtime/knobellib.h")),
        f("knobellib.c", include_str!("../runtime/knobellib.c")),
        f("example.c", include_str!("../runtime/example.c")),
        f("referee.c", include_str!("referee.c")),
        f("protocolfmt.c", include_str!("protocolfmt.c")),
    ]
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
}

//! The linked program, checked before it is accepted: the second wall behind
//! the source checks ([`super::purec`]).
//!
//! What the compile service builds from pure C and the contest runtime is a
//! small static x86-64 executable of a known shape: no program interpreter
//! (`PT_INTERP`, which would make the kernel run another file in the
//! strategy's place), no dynamic section, no thread-local storage, no
//! segment both writable and executable, a non-executable stack, the entry
//! point at the runtime's `_start`, and only the sections gcc and the linker
//! make of plain code and data. Anything else is refused with a sentence
//! saying what was found. The executable bytes are also searched for the
//! encodings of the instructions that read hardware randomness (`rdrand`,
//! `rdseed`, `rdpid`), which no C code needs and which would make a game
//! depend on chance, even when reached in the middle of another instruction.
//!
//! Pure: bytes in, problems out.

use object::elf::{
    ET_EXEC, PF_W, PF_X, PT_DYNAMIC, PT_GNU_PROPERTY, PT_GNU_STACK, PT_INTERP, PT_LOAD, PT_NOTE,
    PT_TLS, SHF_EXECINSTR, SHF_WRITE,
};
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader, SectionHeader};
use object::{Endianness, Object, ObjectSymbol};

/// The first bytes of the runtime's `_start` (`xor %rbp,%rbp; mov %rsp,%rdi;
/// and $-16,%rsp`), which must be at the entry point.
pub const START_PROLOGUE: &[u8] = &[0x48, 0x31, 0xed, 0x48, 0x89, 0xe7, 0x48, 0x83, 0xe4, 0xf0];

/// Sections a strategy program may have (by exact name, or prefix with `.`).
const ALLOWED_SECTIONS: &[&str] = &[
    "",
    ".text",
    ".rodata",
    ".eh_frame",
    ".data",
    ".bss",
    ".comment",
    ".symtab",
    ".strtab",
    ".shstrtab",
    ".note.gnu.property",
];

fn section_allowed(name: &str) -> bool {
    ALLOWED_SECTIONS.contains(&name)
        || [".text.", ".rodata.", ".data.", ".bss."]
            .iter()
            .any(|p| name.starts_with(p) && !name.contains("init") && !name.contains("fini"))
}

/// The problems of a linked strategy program (empty: none). Each is a
/// sentence for the participant.
pub fn check_program(bytes: &[u8]) -> Vec<String> {
    let mut problems = Vec::new();
    let elf = match ElfFile64::<Endianness>::parse(bytes) {
        Ok(e) => e,
        Err(e) => return vec![format!("the linked program is not a 64-bit ELF file ({e})")],
    };
    let endian = elf.endian();
    let header = elf.elf_header();
    if header.e_type(endian) != ET_EXEC {
        problems.push("the linked program is not a static executable".to_string());
    }
    for ph in elf.elf_program_headers() {
        let flags = ph.p_flags(endian);
        match ph.p_type(endian) {
            PT_INTERP => problems.push(
                "the linked program names a program interpreter (an .interp section): the \
                 kernel would start another program in its place"
                    .to_string(),
            ),
            PT_DYNAMIC => problems.push(
                "the linked program has a dynamic section: it must be one static program".into(),
            ),
            PT_TLS => problems.push(
                "the program uses thread-local storage (_Thread_local or __thread), which the \
                 contest runtime does not provide; use plain static variables"
                    .into(),
            ),
            PT_LOAD if flags & PF_W != 0 && flags & PF_X != 0 => problems
                .push("the linked program has memory that is both writable and executable".into()),
            PT_GNU_STACK if flags & PF_X != 0 => {
                problems.push("the linked program asks for an executable stack".into())
            }
            PT_LOAD | PT_GNU_STACK | PT_NOTE | PT_GNU_PROPERTY => {}
            other => problems.push(format!(
                "the linked program has a program header of unexpected type {other:#x}"
            )),
        }
    }
    let mut exec_ranges = Vec::new();
    if let Ok(sections) = header.sections(endian, bytes) {
        for section in sections.iter() {
            let name = sections
                .section_name(endian, section)
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_else(|_| "?".into());
            let flags = section.sh_flags(endian);
            if !section_allowed(&name) {
                problems.push(format!(
                    "the linked program has a section {name:?}, which plain C code does not \
                     make (sections, constructors and the like are not allowed)"
                ));
            } else if flags & u64::from(SHF_EXECINSTR) != 0 {
                if !name.starts_with(".text") {
                    problems.push(format!("the section {name:?} holds code"));
                } else if flags & u64::from(SHF_WRITE) != 0 {
                    problems.push(format!("the code section {name:?} is writable"));
                } else if let Ok(data) = section.data(endian, bytes) {
                    exec_ranges.push((section.sh_addr(endian), data));
                }
            }
        }
    }
    let entry = header.e_entry(endian);
    let starts: Vec<u64> = elf
        .symbols()
        .filter(|s| s.name() == Ok("_start"))
        .map(|s| s.address())
        .collect();
    if starts != [entry] {
        problems.push("the program's entry point is not the contest runtime's _start".into());
    } else {
        let at_entry = exec_ranges.iter().find_map(|(addr, data)| {
            let off = entry.checked_sub(*addr)? as usize;
            data.get(off..off + START_PROLOGUE.len())
        });
        if at_entry != Some(START_PROLOGUE) {
            problems.push("the code at the entry point is not the contest runtime's".into());
        }
    }
    for (addr, data) in &exec_ranges {
        if let Some(at) = data
            .windows(3)
            .position(|w| w[0] == 0x0f && w[1] == 0xc7 && w[2] >= 0xf0)
        {
            problems.push(format!(
                "the program's code contains the bytes 0f c7 {:02x} at address {:#x}, the \
                 encoding of an instruction that reads hardware randomness (rdrand, rdseed, \
                 rdpid): a game must depend only on its seed; change the constant or code \
                 that produces these bytes",
                data[at + 2],
                addr + at as u64
            ));
            break;
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_not_a_program() {
        let p = check_program(b"not an elf file at all");
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("not a 64-bit ELF"));
    }

    #[test]
    fn section_names_follow_the_allowlist() {
        assert!(section_allowed(".text"));
        assert!(section_allowed(".rodata.str1.1"));
        assert!(!section_allowed(".interp"));
        assert!(!section_allowed(".init_array"));
        assert!(!section_allowed(".data.init_array"));
        assert!(!section_allowed(".tdata"));
    }
}

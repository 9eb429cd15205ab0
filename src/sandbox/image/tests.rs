//! Unit tests of the runtime image: interpreters, links, a program's loader
//! and libraries (and fake dynamic sections), an image holding what is asked.

use super::*;

#[test]
fn a_scripts_interpreter_is_its_first_word() {
    assert_eq!(
        interpreter(b"#!/usr/bin/python3 -B\nprint(1)\n"),
        Some(PathBuf::from("/usr/bin/python3"))
    );
    assert_eq!(interpreter(b"#! /bin/sh\n"), Some(PathBuf::from("/bin/sh")));
    assert_eq!(interpreter(b"#!python3\n"), None);
    assert_eq!(interpreter(b"print(1)\n"), None);
}

#[test]
fn links_are_resolved_by_name() {
    assert_eq!(
        normalize(Path::new("/usr/lib/jvm/x/bin/../lib/./libjli.so")),
        PathBuf::from("/usr/lib/jvm/x/lib/libjli.so")
    );
    assert_eq!(normalize(Path::new("/../a")), PathBuf::from("/a"));
}

#[test]
fn a_program_needs_its_loader_and_libraries() {
    let sh = fs::read("/bin/sh").unwrap();
    let needs = program_needs(&sh, Some(Path::new("/bin")));
    assert!(
        needs
            .iter()
            .any(|p| p.to_string_lossy().contains("ld-linux")),
        "{needs:?}"
    );
    assert!(
        needs
            .iter()
            .any(|p| p.to_string_lossy().contains("libc.so")),
        "{needs:?}"
    );
    assert!(program_needs(b"not an ELF file", None).is_empty());
    assert!(program_needs(b"\x7fELF damaged", None).is_empty());
}

/// A bot's program chooses its `.interp` and could name libraries by
/// path: what it names goes into the image only when it is a shared
/// library in the loader's folders. A program whose interpreter is `/`
/// (which would have copied the whole machine) or `/etc/shadow` makes
/// the server copy nothing; one that names the real loader gets it.
#[test]
fn a_programs_own_names_copy_only_the_machines_libraries() {
    assert!(!admissible_library(Path::new("/")));
    assert!(!admissible_library(Path::new("/etc/shadow")));
    assert!(!admissible_library(Path::new("/etc/passwd")));
    assert!(!admissible_library(Path::new("/usr/lib")));
    assert!(!admissible_library(Path::new("lib/libc.so.6")));
    let libc = find_library("libc.so.6").unwrap();
    assert!(admissible_library(&libc));
    let sneaky = libc.parent().unwrap().join("../../../etc/passwd");
    assert!(!admissible_library(&sneaky));
    let loader = program_needs(&fs::read("/bin/sh").unwrap(), None)
        .into_iter()
        .find(|p| p.to_string_lossy().contains("ld-linux"))
        .unwrap();
    assert!(admissible_library(&loader), "{}", loader.display());
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    // A program whose interpreter string says `/` or `/etc/shadow`
    // (written over the loader's path in a built program's bytes).
    let built = fs::read("/bin/sh").unwrap();
    let loader_bytes = loader.as_os_str().as_bytes();
    let at = built
        .windows(loader_bytes.len())
        .position(|w| w == loader_bytes)
        .expect("the loader's path in the program");
    for interp in ["/", "/etc/shadow"] {
        let mut bytes = built.clone();
        let field = &mut bytes[at..at + loader_bytes.len()];
        field.fill(0);
        field[..interp.len()].copy_from_slice(interp.as_bytes());
        assert!(program_needs(&bytes, None).contains(&PathBuf::from(interp)));
        let root = tempfile::tempdir().unwrap();
        let image = RuntimeImage {
            root: root.path().to_path_buf(),
            access: ImageAccess::Fills,
            known: Mutex::new(HashSet::new()),
        };
        image.ensure(&[], &[&bytes]).unwrap();
        // Its libraries (libc, a library of the loader's folders) are
        // there; nothing else of the machine is.
        assert!(root.path().join(libc.strip_prefix("/").unwrap()).exists());
        for elsewhere in ["etc", "usr/bin", "root", "home", "var", "proc"] {
            assert!(
                !root.path().join(elsewhere).exists(),
                "{interp}: {elsewhere}"
            );
        }
    }
}

/// A program may carry a section of the dynamic type that the loader
/// never reads (here naming `/etc/shadow`); its needs are read from
/// the `PT_DYNAMIC` segment, as the loader reads them.
#[test]
fn a_fake_dynamic_section_names_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("fake.c");
    fs::write(
            &src,
            "__asm__(\".section .dynstr,\\\"a\\\"\\n.asciz \\\"/etc/shadow\\\"\\n\"\n\
             \".section .mydyn,\\\"a\\\",%6\\n.quad 1\\n.quad 0x8d\\n.quad 0\\n.quad 0\\n.previous\");\n\
             int main(void) { return 0; }\n",
        )
        .unwrap();
    let exe = dir.path().join("fake");
    let st = std::process::Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let needs = program_needs(&fs::read(&exe).unwrap(), None);
    assert!(!needs.iter().any(|p| p.starts_with("/etc")), "{needs:?}");
    assert!(
        needs
            .iter()
            .any(|p| p.to_string_lossy().contains("libc.so")),
        "{needs:?}"
    );
}

/// The image copies a folder with its links, the libraries of its ELF
/// files and a script's interpreter, and copies a file again when the
/// host's changed.
#[test]
fn the_image_holds_what_is_asked_with_links_and_libraries() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: no image to make here");
        return;
    }
    let host = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let image = RuntimeImage {
        root: root.path().to_path_buf(),
        access: ImageAccess::Fills,
        known: Mutex::new(HashSet::new()),
    };
    let h = host.path();
    fs::create_dir(h.join("lib")).unwrap();
    fs::write(h.join("lib/data.txt"), "one").unwrap();
    fs::copy("/bin/sh", h.join("lib/tool")).unwrap();
    fs::write(h.join("lib/run.sh"), "#!/bin/sh\necho\n").unwrap();
    std::os::unix::fs::symlink("data.txt", h.join("lib/alias")).unwrap();
    std::os::unix::fs::symlink("lib", h.join("home")).unwrap();
    image.ensure(&[h.join("home")], &[]).unwrap();
    let at = |p: &Path| image.path_of(p);
    assert_eq!(
        fs::read_link(at(&h.join("home"))).unwrap(),
        Path::new("lib")
    );
    assert_eq!(fs::read_to_string(at(&h.join("lib/alias"))).unwrap(), "one");
    assert!(at(&h.join("lib/tool")).is_file());
    // The tool's loader and libc; the script's interpreter.
    let libc_dir = library_dirs()
        .into_iter()
        .find(|d| d.join("libc.so.6").exists())
        .unwrap();
    assert!(at(&libc_dir.join("libc.so.6")).exists());
    assert!(at(Path::new("/bin/sh")).exists());
    // Changed on the host: copied again (a new process knows nothing).
    fs::write(h.join("lib/data.txt"), "two!").unwrap();
    // An image this process only reads says what it lacks.
    let reader = RuntimeImage {
        root: root.path().to_path_buf(),
        access: ImageAccess::ReadsOnly,
        known: Mutex::new(HashSet::new()),
    };
    let lacks = reader.ensure(&[h.join("home")], &[]).unwrap_err();
    assert_eq!(lacks.kind(), io::ErrorKind::NotFound);
    assert!(lacks.to_string().contains("data.txt"), "{lacks}");
    let again = RuntimeImage {
        root: root.path().to_path_buf(),
        access: ImageAccess::Fills,
        known: Mutex::new(HashSet::new()),
    };
    again.ensure(&[h.join("home")], &[]).unwrap();
    assert_eq!(
        fs::read_to_string(at(&h.join("lib/data.txt"))).unwrap(),
        "two!"
    );
    reader.ensure(&[h.join("home")], &[]).unwrap();
}

//! The built-in languages ([`builtin`]): C, C++, Python 3, Java and Rust,
//! as data.
//!
//! Not here: the config's `[[language]]` entries, which add to or replace
//! these (`table.rs`).

use super::language::{
    default_compile_cpu, default_compile_memory, default_compile_processes, default_processes,
    default_program_kb, default_stem, Language,
};

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The built-in languages.
pub fn builtin() -> Vec<Language> {
    let base = |name: &str, title: &str| Language {
        name: name.into(),
        title: title.into(),
        extensions: Vec::new(),
        aliases: Vec::new(),
        source: String::new(),
        stem_pattern: None,
        default_stem: default_stem(),
        toolchain: Vec::new(),
        compile: Vec::new(),
        artifacts: Vec::new(),
        run: Vec::new(),
        env: Vec::new(),
        version: Vec::new(),
        paths: Vec::new(),
        memory_extra_mb: 0,
        processes: default_processes(),
        address_space_limit: true,
        compile_memory_mb: default_compile_memory(),
        compile_cpu_secs: default_compile_cpu(),
        compile_proc: false,
        run_proc: false,
        run_files: Vec::new(),
        run_libraries: Vec::new(),
        program_kb: default_program_kb(),
        compile_processes: default_compile_processes(),
    };
    vec![
        Language {
            extensions: v(&["c"]),
            source: "bot.c".into(),
            compile: v(&["gcc", "-O2", "-std=gnu17", "-o", "bot", "{source}", "-lm"]),
            artifacts: v(&["bot"]),
            run: v(&["/bot/bot"]),
            version: v(&["gcc", "--version"]),
            // glibc loads libgcc_s for pthread_exit and pthread_cancel.
            run_libraries: v(&["libc.so.6", "libm.so.6", "libgcc_s.so.1"]),
            ..base("c", "C (gcc -O2)")
        },
        Language {
            extensions: v(&["cpp", "cc", "cxx", "c++"]),
            aliases: v(&["c++", "cxx"]),
            source: "bot.cpp".into(),
            compile: v(&["g++", "-O2", "-std=gnu++17", "-o", "bot", "{source}"]),
            artifacts: v(&["bot"]),
            run: v(&["/bot/bot"]),
            version: v(&["g++", "--version"]),
            run_libraries: v(&["libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"]),
            ..base("cpp", "C++ (g++ -O2)")
        },
        Language {
            extensions: v(&["py"]),
            aliases: v(&["python3", "py"]),
            source: "bot.py".into(),
            // A syntax check; the bot runs from its source.
            compile: v(&["python3", "-m", "py_compile", "{source}"]),
            artifacts: v(&["bot.py"]),
            run: v(&["python3", "-B", "-I", "/bot/bot.py"]),
            version: v(&["python3", "--version"]),
            // The standard library (not the system's dist-packages).
            run_files: v(&["{run_home}/lib/python3.*"]),
            // glibc loads libgcc_s when a thread ends (daemon threads at exit).
            run_libraries: v(&["libgcc_s.so.1"]),
            memory_extra_mb: 32,
            ..base("python", "Python 3")
        },
        Language {
            extensions: v(&["java"]),
            source: "{stem}.java".into(),
            stem_pattern: Some(
                r"(?m)^\s*public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_][A-Za-z0-9_]*)"
                    .into(),
            ),
            default_stem: "Main".into(),
            compile: v(&[
                "javac",
                "-J-Xmx512m",
                "-J-XX:+UseSerialGC",
                "-J-XX:TieredStopAtLevel=1",
                "-encoding",
                "UTF-8",
                "{source}",
            ]),
            artifacts: v(&["*.class"]),
            run: v(&[
                "java",
                "-Xmx{memory_mb}m",
                // The machine's memory is not the bot's to read (no
                // sysinfo): the JVM's ergonomics size from this instead.
                "-XX:MaxRAM={memory_mb}m",
                "-Xss16m",
                "-XX:+UseSerialGC",
                "-XX:ReservedCodeCacheSize=64m",
                "-XX:MaxMetaspaceSize=128m",
                "-Xshare:auto",
                "-cp",
                "/bot",
                "{stem}",
            ]),
            version: v(&["java", "-version"]),
            paths: v(&["/etc/java-*-openjdk"]),
            run_files: v(&["{run_home}/lib", "{run_home}/conf", "{run_home}/release"]),
            run_libraries: v(&["libgcc_s.so.1"]),
            memory_extra_mb: 256,
            processes: 64,
            address_space_limit: false,
            compile_memory_mb: 1024,
            compile_processes: 256,
            compile_proc: true,
            ..base("java", "Java (javac / java)")
        },
        Language {
            extensions: v(&["rs"]),
            source: "bot.rs".into(),
            toolchain: v(&["rustc", "--print", "sysroot"]),
            compile: v(&[
                "{toolchain}/bin/rustc",
                // Without a /proc, rustc cannot find itself.
                "--sysroot",
                "{toolchain}",
                "-O",
                "--edition",
                "2021",
                "-C",
                "strip=symbols",
                // `cc` is a link into /etc/alternatives, which the jail hides.
                "-C",
                "linker=gcc",
                "-o",
                "bot",
                "{source}",
            ]),
            artifacts: v(&["bot"]),
            run: v(&["/bot/bot"]),
            version: v(&["rustc", "--version"]),
            run_libraries: v(&["libc.so.6", "libm.so.6", "libgcc_s.so.1"]),
            compile_memory_mb: 2048,
            compile_processes: 128,
            ..base("rust", "Rust (rustc -O)")
        },
    ]
}

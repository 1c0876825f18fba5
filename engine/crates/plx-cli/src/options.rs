//! The PLX_* settings as the runtime declares them (runtime/src/core/options.def) and reads them
//! (options.c), both compiled in by build.rs: `plx run`'s flags, the checks of their values and
//! the environment they set, and the environment table of docs/commands/plx-run.md.

use std::ffi::{c_char, c_int, CStr, CString, OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;

use clap::{Arg, ArgAction, ArgMatches, Command};

/// `struct plx_option` of options.h.
#[repr(C)]
struct RawOption {
    name: *const c_char,
    kind: c_int,
    def: *const c_char,
    min: u64,
    max: u64,
    choices: *const c_char,
    flag: *const c_char,
    short_flag: c_int,
    value_name: *const c_char,
    doc: *const c_char,
}

/// `struct plx_elsewhere` of options.h.
#[cfg(test)]
#[repr(C)]
struct RawElsewhere {
    name: *const c_char,
    reader: *const c_char,
    doc: *const c_char,
}

extern "C" {
    #[cfg(test)]
    static plx_elsewhere: RawElsewhere;
    #[cfg(test)]
    static plx_elsewhere_count: u32;
    static plx_options: RawOption;
    static plx_option_count: u32;
    fn plx_option_parse(
        o: *const RawOption,
        text: *const c_char,
        value: *mut u64,
        err: *mut c_char,
        cap: usize,
    ) -> c_int;
    fn plx_option_format(o: *const RawOption, value: u64, buf: *mut c_char, cap: usize);
    fn plx_size_format(bytes: u64, buf: *mut c_char, cap: usize);
    #[cfg(test)]
    fn plx_option_known(name: *const c_char) -> c_int;
}

/// An option's grammar (`enum plx_option_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A file or directory (`plx run` passes it absolute).
    Path,
    /// Any text.
    Text,
    /// 1 or 0.
    Bool,
    /// A whole number in [min, max].
    Uint,
    /// Bytes, with an optional K, M or G.
    Size,
    /// One of a few words.
    Choice,
}

/// One PLX_* setting.
#[derive(Debug)]
pub struct Setting {
    index: usize,
    /// The environment variable.
    pub name: &'static str,
    pub kind: Kind,
    /// The default in the option's grammar; `None`: none, or chosen at run time (see `doc`).
    pub default: Option<&'static str>,
    pub min: u64,
    pub max: u64,
    /// The words of a `Choice`.
    pub choices: Vec<&'static str>,
    /// `plx run`'s long flag.
    pub flag: Option<&'static str>,
    pub short: Option<char>,
    pub value_name: &'static str,
    pub doc: &'static str,
}

fn text(p: *const c_char) -> Option<&'static str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the table's strings are NUL-terminated literals of the compiled-in options.c.
    Some(
        unsafe { CStr::from_ptr(p) }
            .to_str()
            .expect("options.def is ASCII"),
    )
}

fn c_buf_text(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Every setting, in the table's order.
pub fn settings() -> &'static [Setting] {
    static TABLE: OnceLock<Vec<Setting>> = OnceLock::new();
    TABLE.get_or_init(|| {
        // SAFETY: plx_option_count is a constant of options.c.
        let n = unsafe { plx_option_count } as usize;
        (0..n)
            .map(|index| {
                let o = raw(index);
                Setting {
                    index,
                    name: text(o.name).expect("every option has a name"),
                    kind: match o.kind {
                        0 => Kind::Path,
                        1 => Kind::Bool,
                        2 => Kind::Uint,
                        3 => Kind::Size,
                        4 => Kind::Choice,
                        5 => Kind::Text,
                        k => panic!("options.def: unknown type {k}"),
                    },
                    default: text(o.def),
                    min: o.min,
                    max: o.max,
                    choices: text(o.choices).map_or_else(Vec::new, |c| c.split('|').collect()),
                    flag: text(o.flag).filter(|f| !f.is_empty()),
                    short: u8::try_from(o.short_flag)
                        .ok()
                        .filter(|&c| c != 0)
                        .map(char::from),
                    value_name: text(o.value_name).unwrap_or(""),
                    doc: text(o.doc).unwrap_or(""),
                }
            })
            .collect()
    })
}

fn raw(index: usize) -> &'static RawOption {
    // SAFETY: plx_options is an array of plx_option_count entries; index is below it.
    unsafe { &*std::ptr::addr_of!(plx_options).add(index) }
}

/// The setting named `name` (`PLX_BUFFER`).
pub fn setting(name: &str) -> &'static Setting {
    settings()
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} is not in runtime/src/core/options.def"))
}

/// A size as the runtime writes it: 4K, 1M, 4G when exact, else bytes.
pub fn size_text(bytes: u64) -> String {
    let mut buf = [0u8; 32];
    // SAFETY: buf is writable for its length; the function writes a NUL-terminated string.
    unsafe { plx_size_format(bytes, buf.as_mut_ptr().cast(), buf.len()) };
    c_buf_text(&buf)
}

impl Setting {
    /// The value of `text` by the runtime's grammar, or what is wrong with it (the message the
    /// runtime gives after `PLX_NAME=TEXT: `).
    pub fn parse(&self, text: &str) -> Result<u64, String> {
        let c = CString::new(text).map_err(|_| "contains a NUL byte".to_string())?;
        let mut value = 0u64;
        let mut err = [0u8; 512];
        // SAFETY: valid option pointer, NUL-terminated text, writable value and error buffer.
        let rc = unsafe {
            plx_option_parse(
                raw(self.index),
                c.as_ptr(),
                &mut value,
                err.as_mut_ptr().cast(),
                err.len(),
            )
        };
        if rc == 0 {
            Ok(value)
        } else {
            Err(c_buf_text(&err))
        }
    }

    /// `value` written as `plx run` passes it on (the runtime reads it back exactly).
    pub fn format(&self, value: u64) -> String {
        let mut buf = [0u8; 64];
        // SAFETY: valid option pointer and writable buffer.
        unsafe { plx_option_format(raw(self.index), value, buf.as_mut_ptr().cast(), buf.len()) };
        c_buf_text(&buf)
    }

    /// Checks `text` and gives it in the form `plx run` sets in the environment.
    pub fn check(&self, text: &str) -> Result<String, String> {
        let v = self.parse(text)?;
        Ok(match self.kind {
            Kind::Path | Kind::Text => text.to_string(),
            _ => self.format(v),
        })
    }

    /// What values the grammar takes, for people.
    pub fn grammar(&self) -> String {
        match self.kind {
            Kind::Path => "a path".to_string(),
            Kind::Text => "text".to_string(),
            Kind::Bool => "1 or 0 (also yes/no, true/false, on/off)".to_string(),
            Kind::Uint => format!("a whole number from {} to {}", self.min, self.max),
            Kind::Size => format!(
                "a size: bytes or a number with K, M or G (powers of 1024; KB, KiB also), from {} \
                 to {}",
                size_text(self.min),
                size_text(self.max)
            ),
            Kind::Choice => match self.choices.split_last() {
                Some((last, [])) => last.to_string(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            },
        }
    }

    fn help(&self) -> String {
        let mut h = self.doc.to_string();
        if matches!(self.kind, Kind::Uint | Kind::Size) {
            h.push_str(&format!("; {}", self.grammar()));
        }
        if let Some(d) = self.default {
            if self.kind != Kind::Bool {
                h.push_str(&format!(" [default: {d}]"));
            }
        }
        h
    }

    /// A flag whose value may be left out: options.def writes its value name `[NAME=VALUE]`,
    /// VALUE being what the bare flag sets (`--sample` is `--sample=1000`).
    fn optional_value(&self) -> Option<(&'static str, &'static str)> {
        self.value_name
            .strip_prefix('[')?
            .strip_suffix(']')?
            .split_once('=')
    }

    /// `plx run`'s flag for this setting, if it has one.
    fn arg(&'static self) -> Option<Arg> {
        let flag = self.flag?;
        let mut arg = Arg::new(flag).long(flag).help(self.help());
        if let Some(c) = self.short {
            arg = arg.short(c);
        }
        if let Some((name, missing)) = self.optional_value() {
            return Some(
                arg.value_name(name)
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value(missing)
                    .value_parser(move |s: &str| self.check(s)),
            );
        }
        arg = match self.kind {
            Kind::Bool => arg.action(ArgAction::SetTrue),
            Kind::Path => arg
                .value_name(self.value_name)
                .value_parser(clap::value_parser!(PathBuf)),
            _ => arg
                .value_name(self.value_name)
                .value_parser(move |s: &str| self.check(s)),
        };
        Some(arg)
    }
}

/// The settings given to `plx run` with flags: each variable and the value to set it to
/// (paths as given; `plx run` makes them absolute).
#[derive(Debug, Clone, Default)]
pub struct RunSettings {
    given: Vec<(&'static Setting, OsString)>,
}

impl RunSettings {
    /// The value given for variable `name`.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.given
            .iter()
            .find(|(s, _)| s.name == name)
            .map(|(_, v)| v.as_os_str())
    }

    /// Every (variable, value) given, in the table's order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static Setting, &OsStr)> {
        self.given.iter().map(|(s, v)| (*s, v.as_os_str()))
    }
}

impl clap::FromArgMatches for RunSettings {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut s = RunSettings::default();
        s.update_from_arg_matches(m)?;
        Ok(s)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        for s in settings() {
            let Some(flag) = s.flag else { continue };
            let value = match s.kind {
                Kind::Bool => m.get_flag(flag).then(|| OsString::from("1")),
                Kind::Path => m.get_one::<PathBuf>(flag).map(|p| p.clone().into()),
                _ => m.get_one::<String>(flag).map(OsString::from),
            };
            if let Some(v) = value {
                self.given.retain(|(g, _)| g.name != s.name);
                self.given.push((s, v));
            }
        }
        Ok(())
    }
}

impl clap::Args for RunSettings {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(settings().iter().filter_map(Setting::arg))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

/// The PLX_* variables other programs of Parallax read (not libplx): (name, reader, doc).
#[cfg(test)]
fn elsewhere() -> Vec<(&'static str, &'static str, &'static str)> {
    // SAFETY: plx_elsewhere is an array of plx_elsewhere_count entries of literals.
    unsafe {
        let first = std::ptr::addr_of!(plx_elsewhere);
        (0..plx_elsewhere_count as usize)
            .map(|i| {
                let e = &*first.add(i);
                (
                    text(e.name).unwrap(),
                    text(e.reader).unwrap(),
                    text(e.doc).unwrap(),
                )
            })
            .collect()
    }
}

/// The docs' Markdown: <program> is text, not a tag.
#[cfg(test)]
fn md(s: &str) -> String {
    s.replace('<', "&lt;").replace('>', "&gt;")
}

/// The environment tables of docs/commands/plx-run.md: a row per setting, then the variables
/// read by other programs.
#[cfg(test)]
fn environment_table() -> String {
    let mut t = String::from(
        "| variable | `plx run` flag | value | default | meaning |\n|---|---|---|---|---|\n",
    );
    for s in settings() {
        let flag = match (s.flag, s.kind) {
            (None, _) => "—".to_string(),
            (Some(f), Kind::Bool) => format!("`--{f}` (sets `1`)"),
            (Some(f), _) if s.optional_value().is_some() => {
                let (name, missing) = s.optional_value().unwrap_or_default();
                format!("`--{f}[={name}]` (bare: `{missing}`)")
            }
            (Some(f), _) => match s.short {
                Some(c) => format!("`-{c}, --{f} {}`", s.value_name),
                None => format!("`--{f} {}`", s.value_name),
            },
        };
        let doc = md(s.doc);
        let default = s.default.map_or("—".to_string(), |d| format!("`{d}`"));
        t.push_str(&format!(
            "| `{}` | {flag} | {} | {default} | {doc} |\n",
            s.name,
            s.grammar(),
        ));
    }
    t.push_str("\nRead by other programs of Parallax, not by the runtime:\n\n");
    t.push_str("| variable | read by | meaning |\n|---|---|---|\n");
    for (name, reader, doc) in elsewhere() {
        t.push_str(&format!("| `{name}` | `{reader}` | {} |\n", md(doc)));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn size(s: &str) -> Result<u64, String> {
        setting("PLX_BUFFER").parse(s)
    }

    #[test]
    fn sizes() {
        assert_eq!(size("64K"), Ok(65536));
        assert_eq!(size("4k"), Ok(4096));
        assert_eq!(size("4KiB"), Ok(4096));
        assert_eq!(size(" 4m "), Ok(4 << 20));
        assert_eq!(size("1G"), Ok(1 << 30));
        assert_eq!(size("4G"), Ok(4 << 30));
        assert_eq!(size("8192"), Ok(8192));
        assert_eq!(size("8192B"), Ok(8192));
        assert_eq!(size("12"), Err("at least 4K".into()));
        assert_eq!(size("8G"), Err("at most 4G".into()));
        assert_eq!(size("4X"), Err("unknown unit 'X' (use K, M or G)".into()));
        assert_eq!(
            size("1.5M"),
            Err("not a whole number of bytes, K, M or G".into())
        );
        assert_eq!(
            size("K"),
            Err("not a size: expected bytes or a number with K, M or G".into())
        );
        assert!(size("-4K").is_err());
        assert_eq!(size("99999999999999999999G"), Err("too large".into()));
        assert_eq!(size("17179869184G"), Err("too large".into()));
        assert_eq!(setting("PLX_BUFFER").check("64K"), Ok("65536".into()));
    }

    #[test]
    fn numbers_words_and_switches() {
        let depth = setting("PLX_MAX_DEPTH");
        assert_eq!(depth.parse("16"), Ok(16));
        let err = "expected a whole number from 16 to 1048576";
        assert_eq!(depth.parse("15"), Err(err.into()));
        assert_eq!(depth.parse("abc"), Err(err.into()));
        assert_eq!(depth.parse("1K"), Err(err.into()));
        let clock = setting("PLX_CLOCK");
        assert_eq!(clock.check("coarse"), Ok("coarse".into()));
        assert_eq!(clock.parse("tsc"), Ok(0));
        assert_eq!(
            clock.parse("fast"),
            Err("expected tsc, monotonic or coarse".into())
        );
        let trace = setting("PLX_TRACE");
        assert_eq!(trace.parse("yes"), Ok(1));
        assert_eq!(trace.parse("0"), Ok(0));
        assert!(trace.parse("2").is_err());
        let path = setting("PLX_OUTPUT");
        assert!(path.parse(&"d".repeat(4095)).is_ok());
        assert!(path.parse(&"d".repeat(4096)).is_err());
    }

    /// `--sample` takes its value only after `=`; alone it sets the value its value name
    /// gives (`[HZ=1000]`), and a following `--` still ends plx run's flags.
    #[test]
    fn optional_value_flag() {
        use clap::{Args, FromArgMatches};
        let cmd = RunSettings::augment_args(Command::new("run"))
            .arg(Arg::new("cmd").num_args(0..).last(true));
        let parse = |args: &[&str]| {
            let m = cmd
                .clone()
                .try_get_matches_from(args)
                .map_err(|e| e.kind())?;
            let s = RunSettings::from_arg_matches(&m).unwrap();
            Ok::<_, clap::error::ErrorKind>(s.get("PLX_SAMPLE").map(|v| v.to_owned()))
        };
        assert_eq!(
            parse(&["run", "--sample", "--", "./app"]),
            Ok(Some("1000".into()))
        );
        assert_eq!(
            parse(&["run", "--sample=250", "--", "./app"]),
            Ok(Some("250".into()))
        );
        assert_eq!(parse(&["run", "--", "./app"]), Ok(None));
        assert!(parse(&["run", "--sample=200000", "--", "./app"]).is_err());
        assert!(parse(&["run", "--sample=fast", "--", "./app"]).is_err());
    }

    #[test]
    fn table_is_consistent() {
        let mut flags = std::collections::HashSet::new();
        for s in settings() {
            assert!(s.name.starts_with("PLX_"), "{}", s.name);
            if let Some(d) = s.default {
                assert!(s.parse(d).is_ok(), "{}: default {d} refused", s.name);
            }
            if let Some(f) = s.flag {
                assert!(flags.insert(f), "--{f} twice");
                assert!(
                    s.kind == Kind::Bool || !s.value_name.is_empty(),
                    "{}: --{f} needs a value name",
                    s.name
                );
            }
            assert!(!s.doc.is_empty(), "{}", s.name);
            assert!(s.min <= s.max, "{}", s.name);
        }
    }

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
    }

    const BEGIN: &str = "<!-- environment table: generated from runtime/src/core/options.def by \
                         `PLX_BLESS=1 cargo test -p plx-cli environment_table` -->\n";
    const END: &str = "<!-- end of the generated environment table -->\n";

    /// The docs' table is the table's; `PLX_BLESS=1` rewrites it.
    #[test]
    fn environment_table_in_docs_is_current() {
        let page = repo().join("docs/commands/plx-run.md");
        let text = std::fs::read_to_string(&page).unwrap();
        let start = text
            .find(BEGIN)
            .expect("plx-run.md: the generated table's begin marker")
            + BEGIN.len();
        let end = text[start..].find(END).expect("plx-run.md: its end marker") + start;
        let want = environment_table();
        if std::env::var_os("PLX_BLESS").is_some() {
            let new = format!("{}{want}{}", &text[..start], &text[end..]);
            std::fs::write(&page, new).unwrap();
            return;
        }
        assert!(
            text[start..end] == want,
            "docs/commands/plx-run.md's environment table is stale: run \
             `PLX_BLESS=1 cargo test -p plx-cli environment_table`"
        );
    }

    /// In options.def, as libplx decides (PLX_BENCH_* covers PLX_BENCH_REPS).
    fn declared(name: &str) -> bool {
        let c = CString::new(name).unwrap();
        // SAFETY: a NUL-terminated name.
        unsafe { plx_option_known(c.as_ptr()) != 0 }
    }

    #[test]
    fn declared_names() {
        assert!(declared("PLX_BUFFER") && declared("PLX_LIB_DIR") && declared("PLX_BENCH_REPS"));
        assert!(!declared("PLX_BUFER") && !declared("PLX_BENCH") && !declared("PLX_BUFFERS"));
        assert!(declared("PLX_BUFFER=8G"));
    }

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                sources(&p, out);
            } else if matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("c" | "h" | "def")
            ) {
                out.push(p);
            }
        }
    }

    /// Every PLX_* the runtime names in its sources is in the table, and only config.c reads
    /// the environment.
    #[test]
    fn runtime_reads_only_the_table() {
        let mut files = Vec::new();
        sources(&repo().join("runtime/src"), &mut files);
        assert!(files.len() > 20, "runtime sources not found");
        let mut read_by_name = Vec::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let name = f.file_name().unwrap().to_str().unwrap();
            for (i, _) in text.match_indices("getenv(") {
                assert_eq!(
                    name,
                    "config.c",
                    "{}: reads the environment itself (at byte {i}); take the value from plx_cfg",
                    f.display()
                );
                if let Some(lit) = text[i + 7..].strip_prefix('"') {
                    read_by_name.push(lit[..lit.find('"').unwrap()].to_string());
                }
            }
            // every "PLX_..." string literal: a variable the runtime reads or talks about
            for (i, _) in text.match_indices("\"PLX_") {
                let lit = &text[i + 1..];
                let end = lit
                    .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap();
                assert!(
                    &lit[..end] == "PLX_" || declared(&lit[..end]),
                    "{}: {} is not in options.def",
                    f.display(),
                    &lit[..end]
                );
            }
        }
        // config.c reads each setting by the table's name, none by a name of its own; of the
        // system's variables it reads LD_PRELOAD alone, which a launcher started by a script
        // extends for its ranks (plx_env_preload)
        assert_eq!(read_by_name, ["LD_PRELOAD"], "getenv of {read_by_name:?}");
        let config = std::fs::read_to_string(repo().join("runtime/src/core/config.c")).unwrap();
        // its other getenv is lookup's (the environment, or the settings block of an attach), by
        // the table's name of the option it is given
        assert_eq!(config.matches("getenv(").count(), 2);
        assert!(config.contains("return getenv(\"LD_PRELOAD\");"));
        assert!(config.contains("static const char *lookup(const struct plx_option *o)"));
        assert!(config.contains("return getenv(o->name);"));
    }

    /// Every PLX_* variable the engine reads is a setting or one of the variables read
    /// elsewhere, in options.def.
    #[test]
    fn engine_reads_only_declared_variables() {
        let mut files = Vec::new();
        let crates = repo().join("engine/crates");
        for c in std::fs::read_dir(&crates).unwrap() {
            let c = c.unwrap().path();
            rust_sources(&c.join("src"), &mut files);
            rust_sources(&c.join("tests"), &mut files);
        }
        assert!(files.len() > 20, "engine sources not found");
        let mut read = 0;
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            for pat in ["var_os(\"", "var(\""] {
                for (i, _) in text.match_indices(pat) {
                    let lit = &text[i + pat.len()..];
                    let name = &lit[..lit.find('"').unwrap()];
                    if name.starts_with("PLX_") {
                        read += 1;
                        assert!(
                            declared(name),
                            "{}: {name} is not in options.def",
                            f.display()
                        );
                    }
                }
            }
        }
        assert!(
            read >= 5,
            "PLX_LIB_DIR, PLX_PYTHON, PLX_BLESS, ... are read"
        );
    }

    fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                rust_sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
}

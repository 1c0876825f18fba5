//! Links the official OTF2 C library (the `otf2` export): found with `pkg-config otf2`, else
//! `otf2-config`; the build stops with what to install when neither finds it.

use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=OTF2_CONFIG");
    let flags = run("pkg-config", &["--libs", "otf2"]).or_else(|| {
        let config = std::env::var("OTF2_CONFIG").unwrap_or_else(|_| "otf2-config".into());
        let libs = run(&config, &["--libs"])?;
        let ldflags = run(&config, &["--ldflags"]).unwrap_or_default();
        Some(format!("{ldflags} {libs}"))
    });
    let Some(flags) = flags else {
        panic!(
            "\n\nplx-export needs the OTF2 library (libotf2) for the otf2 export, and neither \
             `pkg-config otf2` nor `otf2-config` found it.\nInstall it (Debian/Ubuntu: \
             apt-get install libotf2-trace-dev; scripts/deps/20-otf2-python.sh does), or set \
             PKG_CONFIG_PATH / OTF2_CONFIG to an OTF2 installation.\n\n"
        );
    };
    let mut linked = false;
    for f in flags.split_whitespace() {
        if let Some(dir) = f.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = f.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={lib}");
            linked = true;
        }
    }
    if !linked {
        panic!("plx-export: the OTF2 library's flags name no library: {flags}");
    }
}

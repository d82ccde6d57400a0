//! `scripts/fetch-model.sh` on the platforms people run it on: which machines
//! it accepts, given as the wheel tags pip would see there (`MIRA_FETCH_PLATFORM`,
//! `MIRA_FETCH_PYTHON`), the library name it installs for each, the one line it answers
//! elsewhere, before anything is downloaded; and `scripts/onnx-tools.txt` pins an onnxruntime
//! wheel for every machine the script accepts. `scripts/postgres.sh` (the tests' PostgreSQL)
//! picks its wheel by platform and names the ones it has none for.

use std::path::{Path, PathBuf};
use std::process::Command;

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts")
}

/// `bash scripts/SCRIPT ARGS` with `env`: (exit code, stdout, stderr).
fn script(name: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new("bash")
        .arg(scripts().join(name))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `fetch-model.sh ARGS` as on a machine with these tags.
fn fetch_model(platform: &str, python: &str, args: &[&str]) -> (i32, String, String) {
    script(
        "fetch-model.sh",
        args,
        &[
            ("MIRA_FETCH_PLATFORM", platform),
            ("MIRA_FETCH_PYTHON", python),
        ],
    )
}

/// Machines the pinned wheels cover, with the library installed there.
const ACCEPTED: &[(&str, &str, &str)] = &[
    ("manylinux_2_28_x86_64", "cp311", "libonnxruntime.so"),
    ("manylinux_2_39_x86_64", "cp314", "libonnxruntime.so"),
    ("manylinux_2_31_aarch64", "cp312", "libonnxruntime.so"),
    ("manylinux_2_28_aarch64", "cp313", "libonnxruntime.so"),
    ("macosx_14_0_arm64", "cp311", "libonnxruntime.dylib"),
    ("macosx_15_4_arm64", "cp314", "libonnxruntime.dylib"),
    ("macosx_26_0_arm64", "cp313", "libonnxruntime.dylib"),
    ("macosx_13_0_x86_64", "cp312", "libonnxruntime.dylib"),
    ("macosx_15_7_x86_64", "cp313", "libonnxruntime.dylib"),
];

/// Machines it refuses, with words the refusal must contain.
const REFUSED: &[(&str, &str, &str)] = &[
    ("manylinux_2_17_x86_64", "cp312", "glibc 2.17 is too old"),
    ("manylinux_2_27_aarch64", "cp312", "glibc 2.27 is too old"),
    ("linux_x86_64", "cp312", "is not supported"),
    ("musllinux_1_2_aarch64", "cp312", "is not supported"),
    ("manylinux_2_35_riscv64", "cp312", "is not supported"),
    ("macosx_13_6_arm64", "cp312", "macOS 13.6 is too old"),
    ("macosx_12_7_x86_64", "cp311", "macOS 12.7 is too old"),
    (
        "macosx_14_0_x86_64",
        "cp314",
        "CPython 3.14 on an Intel Mac",
    ),
    ("macosx_14_0_x86_64_rosetta", "cp312", "Rosetta"),
    ("win_amd64", "cp312", "is not supported"),
    (
        "manylinux_2_35_x86_64",
        "cp310",
        "Python cp310 is not supported",
    ),
    (
        "manylinux_2_35_x86_64",
        "cp315",
        "Python cp315 is not supported",
    ),
    (
        "macosx_14_0_arm64",
        "pp310",
        "Python pp310 is not supported",
    ),
];

#[test]
fn the_script_accepts_the_supported_machines_with_their_library() {
    for (platform, python, library) in ACCEPTED {
        let (code, out, err) = fetch_model(platform, python, &["--check-platform"]);
        assert_eq!(code, 0, "{platform} {python}: {err}");
        assert!(
            out.contains("is supported") && out.trim_end().ends_with(&format!("as {library})")),
            "{platform} {python}: {out}"
        );
    }
}

/// A machine the wheels do not cover gets one line on stderr, naming what is supported, and
/// nothing is downloaded or created.
#[test]
fn the_script_refuses_other_machines_in_one_line_before_downloading() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("model");
    for (platform, python, says) in REFUSED {
        let (code, out, err) = fetch_model(platform, python, &[target.to_str().unwrap()]);
        assert_eq!(code, 1, "{platform} {python}: {out}{err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(
            err.starts_with("fetch-model: error: ") && err.contains(says),
            "{err}"
        );
        assert!(
            err.contains(
                "supported: Linux x86_64 and aarch64 with glibc 2.28+, macOS 14+ on Apple silicon"
            ),
            "{err}"
        );
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "{platform}: something was created"
        );
    }
}

/// The wheel tags of an onnxruntime wheel's file name: (python, [platforms]).
fn wheel_tags(file: &str) -> (String, Vec<String>) {
    let stem = file.trim_end_matches(".whl");
    let parts: Vec<&str> = stem.split('-').collect();
    let n = parts.len();
    (
        parts[n - 3].to_owned(),
        parts[n - 1].split('.').map(str::to_owned).collect(),
    )
}

/// Whether a wheel built for `wheel` installs on a machine tagged `machine` (manylinux: an
/// older or equal glibc on the same architecture; macOS: an older or equal release, same
/// architecture or universal2).
fn runs_on(wheel: &str, machine: &str) -> bool {
    let numbers = |tag: &str, prefix: &str| -> Option<(u32, u32, String)> {
        let rest = tag.strip_prefix(prefix)?;
        let mut it = rest.splitn(3, '_');
        Some((
            it.next()?.parse().ok()?,
            it.next()?.parse().ok()?,
            it.next()?.to_owned(),
        ))
    };
    for prefix in ["manylinux_", "macosx_"] {
        if let (Some((wm, wn, warch)), Some((mm, mn, march))) =
            (numbers(wheel, prefix), numbers(machine, prefix))
        {
            let arch_ok = warch == march || (prefix == "macosx_" && warch == "universal2");
            return arch_ok && (wm, wn) <= (mm, mn);
        }
    }
    false
}

/// Every machine the script accepts has a pinned onnxruntime wheel (so pip finds a hash for it),
/// and every pinned onnxruntime wheel serves a machine the script accepts.
#[test]
fn the_pins_cover_every_machine_the_script_accepts() {
    let pins = std::fs::read_to_string(scripts().join("onnx-tools.txt")).unwrap();
    let wheels: Vec<(String, Vec<String>)> = pins
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#   onnxruntime-"))
        .map(|w| wheel_tags(w.split_whitespace().next().unwrap()))
        .collect();
    assert!(wheels.len() >= 12, "the wheels listed: {wheels:?}");
    for (platform, python, _) in ACCEPTED {
        assert!(
            wheels
                .iter()
                .any(|(py, tags)| py == python && tags.iter().any(|t| runs_on(t, platform))),
            "no pinned onnxruntime wheel for {platform} {python}"
        );
    }
    for (py, tags) in &wheels {
        let served = tags
            .iter()
            .any(|t| fetch_model(t, py, &["--check-platform"]).0 == 0);
        assert!(
            served,
            "a wheel for {tags:?} {py} is pinned, the script refuses it"
        );
    }
}

/// `postgres.sh platform` as on a machine whose `uname -sm` is `uname`.
fn postgres_platform(uname: &str) -> (i32, String, String) {
    script("postgres.sh", &["platform"], &[("MIRA_PG_UNAME", uname)])
}

#[test]
fn the_test_postgres_comes_for_the_platforms_its_wheel_has() {
    for (uname, tag) in [
        ("Linux x86_64", "manylinux2014_x86_64"),
        ("Darwin arm64", "macosx_11_0_arm64"),
    ] {
        let (code, out, err) = postgres_platform(uname);
        assert_eq!((code, out.trim()), (0, tag), "{uname}: {err}");
    }
    for uname in ["Linux aarch64", "Darwin x86_64", "FreeBSD amd64"] {
        let (code, out, err) = postgres_platform(uname);
        assert_eq!(code, 1, "{uname}: {out}");
        assert!(
            err.contains(&format!("no PostgreSQL build for {uname}"))
                && err.contains("MIRA_TEST_POSTGRES_URL"),
            "{err}"
        );
    }
}

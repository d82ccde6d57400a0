//! The wing of a session: `MIRA_WING`, else `hooks.wing`, else the name of the git repository
//! the session works in, else the name of its working directory.
//!
//! The repository's name is read from its files (no `git` process): the last part of the
//! `origin` remote's URL (`git@host:team/billing.git` → `billing`), else the name of the
//! folder that holds the repository (for a worktree, the main checkout's folder, through its
//! `commondir`), so that every clone and worktree of one project shares a wing.

use std::path::{Path, PathBuf};

/// The wing for a session working in `cwd`, given the `MIRA_WING` variable and `hooks.wing`.
/// `None` when no valid wing name can be made (see [`wing_name`]).
pub fn wing_for(cwd: &Path, env: Option<&str>, configured: Option<&str>) -> Option<String> {
    let named = env
        .or(configured)
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_owned);
    named
        .or_else(|| repository_name(cwd))
        .or_else(|| cwd.file_name().map(|n| n.to_string_lossy().into_owned()))
        .and_then(|w| wing_name(&w))
}

/// `raw` made a valid wing name: letters, digits, `-`, `_` and `.` kept, runs of anything else
/// turned into one `-`, at most 64 characters; `None` when nothing is left.
pub fn wing_name(raw: &str) -> Option<String> {
    let mut out = String::new();
    for c in raw.trim().chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(64).collect();
    (!out.is_empty() && !out.chars().all(|c| c == '.')).then_some(out)
}

/// The name of the git repository `dir` is in.
fn repository_name(dir: &Path) -> Option<String> {
    let root = dir.ancestors().find(|d| d.join(".git").exists())?;
    let git = common_dir(&root.join(".git"));
    origin_name(&git).or_else(|| {
        let holder = if git.file_name().is_some_and(|n| n == ".git") {
            git.parent()?
        } else {
            // A bare repository: its own folder, without `.git`.
            &git
        };
        holder
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".git").to_owned())
    })
}

/// The repository's own folder: `.git` itself, or for a worktree (whose `.git` is a file
/// `gitdir: …`) the main repository's, read from its `commondir`.
fn common_dir(dot_git: &Path) -> PathBuf {
    if dot_git.is_dir() {
        return dot_git.to_path_buf();
    }
    let Some(gitdir) = std::fs::read_to_string(dot_git).ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("gitdir:"))
            .map(|p| PathBuf::from(p.trim()))
    }) else {
        return dot_git.to_path_buf();
    };
    let gitdir = match dot_git.parent() {
        Some(base) if gitdir.is_relative() => base.join(gitdir),
        _ => gitdir,
    };
    match std::fs::read_to_string(gitdir.join("commondir")) {
        Ok(common) => {
            let common = PathBuf::from(common.trim());
            let common = if common.is_relative() {
                gitdir.join(common)
            } else {
                common
            };
            std::fs::canonicalize(&common).unwrap_or(common)
        }
        Err(_) => gitdir,
    }
}

/// The last part of the `origin` remote's URL, without `.git`.
fn origin_name(git: &Path) -> Option<String> {
    let config = std::fs::read_to_string(git.join("config")).ok()?;
    let mut in_origin = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_origin = line.replace(' ', "") == "[remote\"origin\"]";
            continue;
        }
        if !in_origin {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() == "url" {
            let url = value.trim().trim_end_matches('/');
            let last = url.rsplit(['/', ':']).next()?;
            let name = last.strip_suffix(".git").unwrap_or(last);
            return (!name.is_empty()).then(|| name.to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_valid() {
        assert_eq!(wing_name("My Project!").as_deref(), Some("My-Project"));
        assert_eq!(wing_name("billing.git").as_deref(), Some("billing.git"));
        assert_eq!(wing_name("  ").as_deref(), None);
        assert_eq!(wing_name("...").as_deref(), None);
        assert_eq!(wing_name(&"x".repeat(80)).map(|w| w.len()), Some(64));
    }

    #[test]
    fn the_repository_names_the_wing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = dir.path().join("checkout-folder");
        std::fs::create_dir_all(repo.join(".git")).expect("dirs");
        std::fs::create_dir_all(repo.join("src/deep")).expect("dirs");
        let deep = repo.join("src/deep");
        assert_eq!(
            wing_for(&deep, None, None).as_deref(),
            Some("checkout-folder")
        );
        std::fs::write(
            repo.join(".git/config"),
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:team/billing-service.git\n",
        )
        .expect("write");
        assert_eq!(
            wing_for(&deep, None, None).as_deref(),
            Some("billing-service")
        );
        assert_eq!(
            wing_for(&deep, Some("other"), Some("cfg")).as_deref(),
            Some("other")
        );
        assert_eq!(wing_for(&deep, None, Some("cfg")).as_deref(), Some("cfg"));
        // A worktree of it: `.git` is a file pointing into the main repository.
        let wt = dir.path().join("wt-7");
        let admin = repo.join(".git/worktrees/wt-7");
        std::fs::create_dir_all(&admin).expect("dirs");
        std::fs::create_dir_all(&wt).expect("dirs");
        std::fs::write(admin.join("commondir"), "../..\n").expect("write");
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).expect("write");
        assert_eq!(
            wing_for(&wt, None, None).as_deref(),
            Some("billing-service")
        );
        // No repository: the folder's name.
        let plain = dir.path().join("notes dir");
        std::fs::create_dir_all(&plain).expect("dirs");
        assert_eq!(wing_for(&plain, None, None).as_deref(), Some("notes-dir"));
    }
}

//! Atomic file-system writes: a file or a whole directory is on disk complete or not at all.
//!
//! Files are written to a temporary name in the same directory, fsynced and renamed over the
//! target; directories are built next to their target and renamed into place (an existing
//! directory is first renamed aside, then removed). Everything the corpus and the findings
//! directory write goes through here, so a campaign killed mid-write never leaves half a finding.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// An I/O error with the path it happened on.
///
/// The OS message is part of `Display` and deliberately not exposed as `source()`: anyhow's
/// `{:#}` prints the whole chain, so a source would print the OS message twice
/// (`x.json: read: No such file or directory (os error 2): No such file or directory (os error 2)`).
#[derive(Debug, thiserror::Error)]
#[error("{}: {what}: {error}", path.display())]
pub struct IoError {
    /// The path.
    pub path: PathBuf,
    /// What was being done (`write`, `rename`, ...).
    pub what: &'static str,
    /// The OS error.
    pub error: std::io::Error,
}

impl IoError {
    /// An error of `what` on `path`.
    pub fn new(path: &Path, what: &'static str, error: std::io::Error) -> IoError {
        IoError {
            path: path.to_path_buf(),
            what,
            error,
        }
    }
}

impl From<IoError> for std::io::Error {
    fn from(e: IoError) -> std::io::Error {
        std::io::Error::new(e.error.kind(), e.to_string())
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name unique in this process and among processes: `.<stem>.<tag>-<pid>-<n>`.
fn sibling(target: &Path, tag: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let stem = target
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let name = format!(".{stem}.{tag}-{}-{n}", std::process::id());
    match target.parent() {
        Some(p) => p.join(name),
        None => PathBuf::from(name),
    }
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn sync_dir(dir: &Path) {
    // Directory fsync makes the rename durable; not every platform supports opening a
    // directory for it, and a failure here loses durability, not atomicity.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    let mut f = File::create(path).map_err(|e| IoError::new(path, "create", e))?;
    f.write_all(bytes)
        .map_err(|e| IoError::new(path, "write", e))?;
    f.sync_all().map_err(|e| IoError::new(path, "fsync", e))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    let parent = parent_of(path);
    fs::create_dir_all(parent).map_err(|e| IoError::new(parent, "create directory", e))?;
    let tmp = sibling(path, "tmp");
    if let Err(e) = write_synced(&tmp, bytes) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(IoError::new(path, "rename into place", e));
    }
    sync_dir(parent);
    Ok(())
}

/// Writes a directory of files atomically: `files` (name, bytes) are written into a temporary
/// directory next to `dir`, fsynced, and the directory is renamed into place. A name may be a
/// relative path (`original/meta.json`): its sub-directories are created inside. An existing
/// `dir` is replaced: renamed aside first, then removed, so at every instant `dir` is either the
/// old complete directory or the new complete one (or, for the instant between the two renames,
/// absent).
pub fn write_dir_atomic(dir: &Path, files: &[(&str, &[u8])]) -> Result<(), IoError> {
    let parent = parent_of(dir);
    fs::create_dir_all(parent).map_err(|e| IoError::new(parent, "create directory", e))?;
    let tmp = sibling(dir, "tmp");
    let build = || -> Result<(), IoError> {
        fs::create_dir(&tmp).map_err(|e| IoError::new(&tmp, "create directory", e))?;
        for (name, bytes) in files {
            let rel = Path::new(name);
            let inside = rel
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            if !inside {
                let e = std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "a file of the directory must be a relative path inside it",
                );
                return Err(IoError::new(rel, "write", e));
            }
            let path = tmp.join(rel);
            let sub = parent_of(&path);
            fs::create_dir_all(sub).map_err(|e| IoError::new(sub, "create directory", e))?;
            write_synced(&path, bytes)?;
            if sub != tmp {
                sync_dir(sub);
            }
        }
        sync_dir(&tmp);
        Ok(())
    };
    if let Err(e) = build() {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let old = dir.exists().then(|| sibling(dir, "old"));
    if let Some(old) = &old
        && let Err(e) = fs::rename(dir, old)
    {
        let _ = fs::remove_dir_all(&tmp);
        return Err(IoError::new(dir, "move the previous directory aside", e));
    }
    if let Err(e) = fs::rename(&tmp, dir) {
        if let Some(old) = &old {
            let _ = fs::rename(old, dir);
        }
        let _ = fs::remove_dir_all(&tmp);
        return Err(IoError::new(dir, "rename into place", e));
    }
    sync_dir(parent);
    if let Some(old) = old {
        let _ = fs::remove_dir_all(old);
    }
    Ok(())
}

/// Every file under `dir`, as (path relative to `dir` with `/` separators, bytes), sorted: what
/// [`write_dir_atomic`] takes, to carry a directory's files into a new one.
pub fn read_tree(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, IoError> {
    fn walk(root: &Path, rel: &str, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), IoError> {
        let here = if rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(rel)
        };
        let listing = fs::read_dir(&here).map_err(|e| IoError::new(&here, "list", e))?;
        for item in listing {
            let item = item.map_err(|e| IoError::new(&here, "list", e))?;
            let name = item.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let path = item.path();
            if path.is_dir() {
                walk(root, &child, out)?;
            } else {
                let bytes = fs::read(&path).map_err(|e| IoError::new(&path, "read", e))?;
                out.push((child, bytes));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out)?;
    out.sort();
    Ok(out)
}

/// Reads a file to a string, naming it in the error.
pub fn read_to_string(path: &Path) -> Result<String, IoError> {
    fs::read_to_string(path).map_err(|e| IoError::new(path, "read", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_and_directory_writes_replace_whole() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("a.json");
        write_atomic(&f, b"one").unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "two");
        let d = t.path().join("finding");
        write_dir_atomic(&d, &[("x", b"1"), ("y", b"2")]).unwrap();
        write_dir_atomic(&d, &[("x", b"3")]).unwrap();
        assert_eq!(fs::read_to_string(d.join("x")).unwrap(), "3");
        assert!(
            !d.join("y").exists(),
            "the old directory is replaced, not merged"
        );
        let leftovers: Vec<_> = fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "temporaries left: {leftovers:?}");
    }

    #[test]
    fn a_directory_carries_sub_directories_and_refuses_paths_outside() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("finding");
        write_dir_atomic(&d, &[("meta.json", b"new"), ("original/meta.json", b"old")]).unwrap();
        assert_eq!(
            fs::read_to_string(d.join("original/meta.json")).unwrap(),
            "old"
        );
        assert_eq!(
            read_tree(&d).unwrap(),
            vec![
                ("meta.json".to_string(), b"new".to_vec()),
                ("original/meta.json".to_string(), b"old".to_vec()),
            ]
        );
        for bad in ["../escape", "/abs"] {
            assert!(write_dir_atomic(&d, &[(bad, b"x")]).is_err(), "{bad}");
        }
        assert_eq!(fs::read_to_string(d.join("meta.json")).unwrap(), "new");
        assert!(!t.path().join("escape").exists());
    }

    #[test]
    fn an_io_error_names_the_os_message_once() {
        let t = tempfile::tempdir().unwrap();
        let missing = t.path().join("absent.json");
        let e = read_to_string(&missing).unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("{}: read: ", missing.display())),
            "{shown}"
        );
        // An error chain printer (anyhow's `{:#}`) appends every source: there is none.
        assert!(std::error::Error::source(&e).is_none(), "{shown}");
        let os = std::fs::read_to_string(&missing).unwrap_err().to_string();
        assert_eq!(shown.matches(&os).count(), 1, "{shown}");
    }
}

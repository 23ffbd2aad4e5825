//! The XDG base directories arev reads, each with its fallback under `$HOME`: written once
//! here for the user config, git's user-level ignore and attributes files, the verdict
//! cache, the agents' private homes (`backends::home`) and OpenCode's login.

use std::ffi::OsString;
use std::path::PathBuf;

/// `$XDG_CONFIG_HOME`, else `$HOME/.config` (where git looks for its user-level `ignore`
/// and `attributes` files, and arev for its user config); None without either.
pub fn config_home() -> Option<PathBuf> {
    config_home_from(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
}

/// [`config_home`] for the given `XDG_CONFIG_HOME` and `HOME` values.
pub fn config_home_from(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    xdg.map(PathBuf::from)
        .or_else(|| home.map(|h| PathBuf::from(h).join(".config")))
}

/// `$XDG_CACHE_HOME` when it is absolute (the XDG spec ignores a relative one), else
/// `$HOME/.cache` when `$HOME` is absolute; None otherwise.
pub fn cache_home() -> Option<PathBuf> {
    cache_home_from(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

/// [`cache_home`] for the given `XDG_CACHE_HOME` and `HOME` values.
pub fn cache_home_from(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    base_dir_from(xdg, home, ".cache")
}

/// `$XDG_DATA_HOME`, else `$HOME/.local/share`, by the same rule as [`cache_home_from`]
/// (where OpenCode keeps its login).
pub fn data_home_from(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    base_dir_from(xdg, home, ".local/share")
}

/// The one XDG fallback: the base directory `xdg` when it is absolute (the XDG spec ignores
/// a relative one), else `$HOME/<under_home>` when `$HOME` is absolute; None otherwise.
fn base_dir_from(
    xdg: Option<OsString>,
    home: Option<OsString>,
    under_home: &str,
) -> Option<PathBuf> {
    xdg.map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            home.map(PathBuf::from)
                .filter(|h| h.is_absolute())
                .map(|h| h.join(under_home))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    fn path(s: &str) -> Option<PathBuf> {
        Some(PathBuf::from(s))
    }

    #[test]
    fn the_config_home_is_xdg_as_set_else_under_home() {
        assert_eq!(config_home_from(os("/x"), os("/h")), path("/x"));
        // As set, also when relative (git's own reading differs only for an empty value).
        assert_eq!(config_home_from(os("rel"), os("/h")), path("rel"));
        assert_eq!(config_home_from(None, os("/h")), path("/h/.config"));
        assert_eq!(config_home_from(None, None), None);
    }

    #[test]
    fn the_cache_home_is_an_absolute_xdg_else_under_an_absolute_home() {
        assert_eq!(cache_home_from(os("/x"), os("/h")), path("/x"));
        assert_eq!(cache_home_from(os("rel"), os("/h")), path("/h/.cache"));
        assert_eq!(cache_home_from(None, os("/h")), path("/h/.cache"));
        assert_eq!(cache_home_from(None, os("h")), None);
        assert_eq!(cache_home_from(os("rel"), None), None);
        assert_eq!(data_home_from(os("/d"), os("/h")), path("/d"));
        assert_eq!(data_home_from(None, os("/h")), path("/h/.local/share"));
        assert_eq!(data_home_from(os("rel"), os("h")), None);
    }
}

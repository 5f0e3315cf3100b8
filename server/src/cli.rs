//! The command line, read with clap: where to listen and what to serve.

use std::net::ToSocketAddrs;
use std::path::{Component, PathBuf};
use std::time::Duration;

use clap::builder::{NonEmptyStringValueParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

/// Serves the page (www/), the wasm packages (crate/pkg/, crate/pkg-full/) and the fixtures, and
/// answers GET /palettes?collection=C&scenario=NAME&run=RUN (C: coast, forest or desert) from
/// the scenarios in ROOT/fixtures/*.json.
#[derive(Debug, Parser)]
// A flag given twice keeps its last value, as the server always did.
#[command(name = "fixture-server", args_override_self = true)]
struct Args {
    /// Address to listen on.
    #[arg(long, value_name = "HOST", default_value = "127.0.0.1", value_parser = NonEmptyStringValueParser::new().try_map(resolvable))]
    host: String,
    /// Port to listen on; 0 picks a free one [default: $PORT, else 8080].
    #[arg(long, value_name = "PORT", value_parser = port_number)]
    port: Option<u16>,
    /// The repository root holding www/, crate/pkg/ and fixtures/.
    #[arg(long, value_name = "ROOT", default_value = ".", value_parser = NonEmptyStringValueParser::new())]
    root: String,
    /// Also serve everything on this port (0 picks a free one): a second origin, for a page that
    /// fetches /palettes cross-origin (?api=ORIGIN).
    #[arg(long, value_name = "PORT", value_parser = port_number)]
    second_port: Option<u16>,
    /// Transport faults to inject, or `none` for no faults [default:
    /// ROOT/server/transport-faults.json when it exists].
    #[arg(long, value_name = "FILE", value_parser = fault_source)]
    faults: Option<FaultSource>,
    /// Also serve the folder DIR (relative to the root) under the URL path PREFIX, such as
    /// `--mount /e2e=tests/e2e/pages` (repeatable).
    #[arg(long = "mount", value_name = "PREFIX=DIR", value_parser = mount)]
    mounts: Vec<(String, PathBuf)>,
    /// Close a connection that has not sent a complete request head this many seconds after the
    /// server began waiting for one: a new connection, or one kept alive after a response.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = timeout_seconds)]
    header_timeout: Duration,
}

/// Where to listen and what to serve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The address to bind, as given (`127.0.0.1`, `::1`, `localhost`).
    pub host: String,
    /// The port; 0 asks the system for a free one.
    pub port: u16,
    /// The repository root.
    pub root: PathBuf,
    /// A second port to serve the same routes on (another origin), if any.
    pub second_port: Option<u16>,
    /// The fault file: `Default` looks for `ROOT/server/transport-faults.json`.
    pub faults: FaultSource,
    /// Extra folders to serve: a URL path prefix (`/e2e`) and a folder relative to the root.
    pub mounts: Vec<(String, PathBuf)>,
    /// How long a connection may take to send a request head, idle time before it included.
    pub header_timeout: Duration,
}

/// Where the transport faults come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultSource {
    /// `ROOT/server/transport-faults.json` if that file exists, else none.
    Default,
    /// No faults.
    None,
    /// This file; it must exist.
    File(PathBuf),
}

impl Options {
    /// The fault file to load, if any.
    pub fn fault_file(&self) -> Option<PathBuf> {
        match &self.faults {
            FaultSource::None => None,
            FaultSource::File(path) => Some(path.clone()),
            FaultSource::Default => {
                let path = self.root.join("server").join("transport-faults.json");
                path.is_file().then_some(path)
            }
        }
    }
}

/// The port used without `--port` or `PORT`.
const DEFAULT_PORT: u16 = 8080;

/// Reads the arguments (without the program name). `port_env` is the `PORT` environment
/// variable, used when `--port` is absent (and ignored when blank). `--help` comes back as an
/// error of kind [`ErrorKind::DisplayHelp`], whose text is the help.
pub fn parse<I>(args: I, port_env: Option<&str>) -> Result<Options, clap::Error>
where
    I: IntoIterator<Item = String>,
{
    let args = Args::try_parse_from(std::iter::once("fixture-server".to_owned()).chain(args))?;
    let port = match (args.port, port_env.map(str::trim).filter(|p| !p.is_empty())) {
        (Some(port), _) => port,
        (None, Some(env)) => port_number(env).map_err(|problem| {
            Args::command().error(
                ErrorKind::InvalidValue,
                format!("invalid value '{env}' for the PORT environment variable: {problem}"),
            )
        })?,
        (None, None) => DEFAULT_PORT,
    };
    // Port 0 asks the system for a free port, so two zeros are two origins; any other port
    // given twice would be one origin, and its second listener could never open.
    if args
        .second_port
        .is_some_and(|second| second != 0 && second == port)
    {
        return Err(Args::command().error(
            ErrorKind::ArgumentConflict,
            format!(
                "--second-port {port} is the port the server already listens on: the second \
                 origin needs a port of its own"
            ),
        ));
    }
    if let Some(twice) = (args.mounts.iter().enumerate())
        .find(|(i, (p, _))| args.mounts[..*i].iter().any(|(q, _)| q == p))
        .map(|(_, (p, _))| p)
    {
        return Err(Args::command().error(
            ErrorKind::ValueValidation,
            format!("--mount: the prefix {twice} is given twice"),
        ));
    }
    Ok(Options {
        host: args.host,
        port,
        root: PathBuf::from(args.root),
        second_port: args.second_port,
        faults: args.faults.unwrap_or(FaultSource::Default),
        mounts: args.mounts,
        header_timeout: args.header_timeout,
    })
}

/// `--host`: a name or address that resolves to at least one address to listen on, so that a
/// bad one is a usage error (exit 2) before anything is loaded, not a failure to listen.
fn resolvable(text: String) -> Result<String, String> {
    match (text.as_str(), 0).to_socket_addrs() {
        Ok(addresses) if addresses.len() > 0 => Ok(text),
        Ok(_) => Err(format!("{text} resolves to no address")),
        Err(e) => Err(format!("{text} does not resolve to an address: {e}")),
    }
}

/// `text` as a port number.
fn port_number(text: &str) -> Result<u16, String> {
    text.parse::<u16>()
        .map_err(|_| "must be a port number from 0 to 65535".to_owned())
}

/// `--header-timeout`: seconds, at least a millisecond (fractions allowed), at most a day.
fn timeout_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| "must be a number of seconds, such as 60 or 0.5".to_owned())?;
    if !(0.001..=86_400.0).contains(&seconds) {
        return Err("must be at least 0.001 and at most 86400 seconds (a day)".to_owned());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `--faults`: `none`, or a file.
fn fault_source(text: &str) -> Result<FaultSource, String> {
    match text {
        "" => Err("must name a file, or `none`".to_owned()),
        "none" => Ok(FaultSource::None),
        path => Ok(FaultSource::File(PathBuf::from(path))),
    }
}

/// `PREFIX=DIR`: a URL path prefix such as `/e2e` (one or more segments of letters, digits and
/// `-._~`, no trailing slash, no `.` or `..`) and a folder. The router reads `:`, `*`, `{` and `}`
/// in a path as its own syntax, and `%` would never match a decoded request path, so they are
/// refused here rather than panicking or never matching there.
fn mount(text: &str) -> Result<(String, PathBuf), String> {
    let bad = || {
        "must be PREFIX=DIR with a PREFIX like /e2e (letters, digits and -._~ between its \
         slashes) and a folder"
            .to_owned()
    };
    let (prefix, dir) = text.split_once('=').ok_or_else(bad)?;
    let plain = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
    };
    let segments_ok = prefix.strip_prefix('/').is_some_and(|rest| {
        rest.split('/')
            .all(|s| !s.is_empty() && s != ".." && s != "." && plain(s))
    });
    if !segments_ok || dir.is_empty() {
        return Err(bad());
    }
    let inside = (std::path::Path::new(dir).components())
        .all(|part| matches!(part, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(format!(
            "{dir} must be a folder inside the root: a relative path, without `..`"
        ));
    }
    let first = prefix.split('/').nth(1).unwrap_or_default();
    if ROUTES.contains(&first) {
        return Err(format!(
            "{prefix} is under /{first}, which the server serves itself; the prefix must not \
             start with any of /{}",
            ROUTES.join(", /")
        ));
    }
    Ok((prefix.to_string(), PathBuf::from(dir)))
}

/// The first path segments of the server's own routes, which a mount may not take.
const ROUTES: &[&str] = &[
    "palettes",
    "log",
    "scenarios",
    "beacon",
    "away",
    "pkg",
    "pkg-full",
    "fixtures",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn run(list: &[&str], env: Option<&str>) -> Options {
        parse(args(list), env).unwrap_or_else(|e| panic!("expected options, got {e}"))
    }

    /// The error of `list`, rendered as clap prints it.
    fn error(list: &[&str], env: Option<&str>) -> (ErrorKind, String) {
        match parse(args(list), env) {
            Ok(options) => panic!("{list:?} was accepted: {options:?}"),
            Err(e) => (e.kind(), e.to_string()),
        }
    }

    #[test]
    fn defaults() {
        let options = run(&[], None);
        assert_eq!(options.host, "127.0.0.1");
        assert_eq!(options.port, 8080);
        assert_eq!(options.root, PathBuf::from("."));
        assert_eq!(options.second_port, None);
        assert_eq!(options.faults, FaultSource::Default);
        assert!(options.mounts.is_empty());
        assert_eq!(options.header_timeout, Duration::from_secs(60));
    }

    #[test]
    fn a_header_timeout_is_seconds_from_a_millisecond_to_a_day() {
        let options = run(&["--header-timeout", "0.5"], None);
        assert_eq!(options.header_timeout, Duration::from_millis(500));
        assert_eq!(
            run(&["--header-timeout=90"], None).header_timeout,
            Duration::from_secs(90)
        );
        // Both ends are in.
        assert_eq!(
            run(&["--header-timeout=0.001"], None).header_timeout,
            Duration::from_millis(1)
        );
        assert_eq!(
            run(&["--header-timeout=86400"], None).header_timeout,
            Duration::from_secs(86_400)
        );
        for bad in [
            "0", "1e-10", "0.0009", "-1", "NaN", "inf", "1e999", "86400.5", "90000", "soon", "",
        ] {
            let (kind, message) = error(&[&format!("--header-timeout={bad}")], None);
            assert_eq!(kind, ErrorKind::ValueValidation, "{bad}: {message}");
            assert!(message.contains("--header-timeout"), "{bad}: {message}");
        }
    }

    #[test]
    fn mounts_name_a_prefix_and_a_folder() {
        let options = run(&["--mount", "/e2e=tests/e2e/pages", "--mount=/a/b=x"], None);
        assert_eq!(
            options.mounts,
            [
                ("/e2e".to_string(), PathBuf::from("tests/e2e/pages")),
                ("/a/b".to_string(), PathBuf::from("x")),
            ]
        );
        // The router's own syntax (which made it panic, or match everything), and `%`, which
        // no decoded request path could match.
        for bad in [
            "e2e=x",
            "/=x",
            "/e2e/=x",
            "/../x=y",
            "/./x=y",
            "/e2e=",
            "/e2e",
            "/:x=www",
            "/*x=www",
            "/a/{*r}=www",
            "/{x}=fixtures",
            "/a/%2e%2e=x",
            "/a b=x",
        ] {
            let (kind, message) = error(&["--mount", bad], None);
            assert_eq!(kind, ErrorKind::ValueValidation, "{bad}");
            assert!(message.contains("--mount"), "{bad}: {message}");
            assert!(message.contains("PREFIX=DIR"), "{bad}: {message}");
        }
        for taken in ["/pkg=www", "/log=x", "/fixtures/more=x", "/palettes=x"] {
            let (kind, message) = error(&["--mount", taken], None);
            assert_eq!(kind, ErrorKind::ValueValidation, "{taken}");
            assert!(
                message.contains("the server serves itself"),
                "{taken}: {message}"
            );
        }
        let (kind, message) = error(&["--mount", "/e2e=a", "--mount", "/e2e=b"], None);
        assert_eq!(kind, ErrorKind::ValueValidation);
        assert!(message.contains("/e2e is given twice"), "{message}");
        // The folder is inside the root: not an absolute path, and never above it.
        for outside in ["/e2e=/etc", "/e2e=../secrets", "/e2e=www/../../x"] {
            let (kind, message) = error(&["--mount", outside], None);
            assert_eq!(kind, ErrorKind::ValueValidation, "{outside}");
            assert!(
                message.contains("must be a folder inside the root"),
                "{outside}: {message}"
            );
        }
        assert_eq!(run(&["--mount", "/e2e=./www"], None).mounts.len(), 1);
        // A name that only starts like a route is free.
        assert_eq!(run(&["--mount", "/pkgs=x"], None).mounts.len(), 1);
    }

    #[test]
    fn a_second_origin_and_the_fault_file() {
        let options = run(&["--second-port", "0", "--faults", "none"], None);
        assert_eq!(options.second_port, Some(0));
        assert_eq!(options.fault_file(), None);
        let options = run(&["--second-port=9002", "--faults=/tmp/f.json"], None);
        assert_eq!(options.second_port, Some(9002));
        assert_eq!(options.fault_file(), Some(PathBuf::from("/tmp/f.json")));
        // The same port twice is one origin: refused by name, from the flag or from PORT.
        for (list, env) in [
            (&["--port", "9002", "--second-port", "9002"][..], None),
            (&["--second-port", "9003"][..], Some("9003")),
        ] {
            let (kind, message) = error(list, env);
            assert_eq!(kind, ErrorKind::ArgumentConflict, "{message}");
            assert!(message.contains("--second-port 900"), "{message}");
            assert!(message.contains("a port of its own"), "{message}");
        }
        assert_eq!(
            run(&["--port", "0", "--second-port", "0"], None).second_port,
            Some(0)
        );
        let (_, message) = error(&["--second-port", "x"], None);
        assert!(message.contains("--second-port"), "{message}");
        assert!(message.contains("from 0 to 65535"), "{message}");
        // The default looks in the root, and only uses a file that is there.
        let options = run(&["--root", "/nonexistent-root"], None);
        assert_eq!(options.fault_file(), None);
    }

    #[test]
    fn flags_in_both_spellings() {
        let options = run(&["--host", "::1", "--port=0", "--root", "/tmp/x"], None);
        assert_eq!(options.host, "::1");
        assert_eq!(options.port, 0);
        assert_eq!(options.root, PathBuf::from("/tmp/x"));
    }

    #[test]
    fn a_flag_given_twice_keeps_its_last_value() {
        assert_eq!(run(&["--port", "1", "--port", "2"], None).port, 2);
        assert_eq!(
            run(&["--faults", "none", "--faults=f.json"], None).faults,
            FaultSource::File(PathBuf::from("f.json"))
        );
    }

    #[test]
    fn port_env_is_used_only_without_the_flag() {
        assert_eq!(run(&[], Some("9000")).port, 9000);
        assert_eq!(run(&["--port", "9001"], Some("9000")).port, 9001);
        assert_eq!(run(&[], Some(" ")).port, 8080);
        assert_eq!(run(&[], Some(" 9003 ")).port, 9003);
        // A bad PORT is an error only when it would be used.
        assert_eq!(run(&["--port", "9001"], Some("http")).port, 9001);
        let (kind, message) = error(&[], Some("http"));
        assert_eq!(kind, ErrorKind::InvalidValue);
        assert!(message.contains("PORT environment variable"), "{message}");
        assert!(message.contains("'http'"), "{message}");
    }

    #[test]
    fn bad_arguments_are_errors_naming_the_flag() {
        // (arguments, the error's kind, a piece of its message)
        let cases: &[(&[&str], ErrorKind, &str)] = &[
            (&["--port"], ErrorKind::InvalidValue, "--port <PORT>"),
            (
                &["--port", "70000"],
                ErrorKind::ValueValidation,
                "'70000' for '--port <PORT>'",
            ),
            (&["--port", "-1"], ErrorKind::UnknownArgument, "'-1'"),
            (&["--verbose"], ErrorKind::UnknownArgument, "'--verbose'"),
            (&["extra"], ErrorKind::UnknownArgument, "'extra'"),
            (&["--host", ""], ErrorKind::InvalidValue, "--host <HOST>"),
            (
                &["--host", "999.1.1.1"],
                ErrorKind::ValueValidation,
                "'999.1.1.1' for '--host <HOST>'",
            ),
            (&["--root="], ErrorKind::InvalidValue, "--root <ROOT>"),
            (
                &["--faults", ""],
                ErrorKind::ValueValidation,
                "must name a file",
            ),
        ];
        for (list, kind, piece) in cases {
            let (got, message) = error(list, None);
            assert_eq!(got, *kind, "{list:?}: {message}");
            assert!(message.contains(piece), "{list:?}: {message}");
        }
    }

    #[test]
    fn help_names_every_flag_and_its_default() {
        let (kind, help) = error(&["--help"], None);
        assert_eq!(kind, ErrorKind::DisplayHelp);
        for piece in [
            "Usage: fixture-server [OPTIONS]",
            "GET /palettes?collection=C&scenario=NAME&run=RUN",
            "--host <HOST>",
            "[default: 127.0.0.1]",
            "--port <PORT>",
            "[default: $PORT, else 8080]",
            "--root <ROOT>",
            "[default: .]",
            "--second-port <PORT>",
            "--faults <FILE>",
            "ROOT/server/transport-faults.json",
            "--mount <PREFIX=DIR>",
            "(repeatable)",
            "--header-timeout <SECONDS>",
            "[default: 60]",
        ] {
            assert!(help.contains(piece), "--help lacks {piece:?}:\n{help}");
        }
        assert_eq!(error(&["-h"], None).0, ErrorKind::DisplayHelp);
    }
}

//! Command line: `fixture-server [--host HOST] [--port PORT] [--root DIR]`.

use std::path::PathBuf;

/// The usage text printed by `--help` and after a bad argument.
pub const USAGE: &str = "\
usage: fixture-server [--host HOST] [--port PORT] [--root DIR] [--second-port PORT] [--faults FILE]
                      [--mount PREFIX=DIR]...

Serves the page (www/), the wasm packages (crate/pkg/, crate/pkg-full/) and the fixtures, and answers
GET /palettes?collection=C&scenario=NAME&run=RUN (C: coast, forest or desert) from the scenarios in
DIR/fixtures/*.json.

  --host HOST          address to listen on (default 127.0.0.1)
  --port PORT          port to listen on; 0 picks a free one (default: $PORT, else 8080)
  --root DIR           the repository root holding www/, crate/pkg/ and fixtures/ (default: .)
  --second-port PORT   also serve everything on this port (0 picks a free one): a second
                       origin, for a page that fetches /palettes cross-origin (?api=ORIGIN)
  --faults FILE        transport faults to inject (default: DIR/server/transport-faults.json
                       when it exists; `none` for no faults)
  --mount PREFIX=DIR   also serve the folder DIR (relative to the root) under the URL path
                       PREFIX, such as `--mount /e2e=tests/e2e/pages` (repeatable)
";

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

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Start the server.
    Run(Options),
    /// Print the usage and exit.
    Help,
}

/// Reads the arguments (without the program name). `port_env` is the `PORT` environment
/// variable, used when `--port` is absent.
pub fn parse<I>(args: I, port_env: Option<&str>) -> Result<Command, String>
where
    I: IntoIterator<Item = String>,
{
    let mut host = String::from("127.0.0.1");
    let mut port: Option<u16> = None;
    let mut root = PathBuf::from(".");
    let mut second_port = None;
    let mut faults = FaultSource::Default;
    let mut mounts = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_string(), Some(value.into())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match inline.clone().or_else(|| args.next()) {
                Some(v) if !v.is_empty() => Ok(v),
                _ => Err(format!("{name} needs a value")),
            }
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--host" => host = value("--host")?,
            "--port" => port = Some(parse_port(&value("--port")?, "--port")?),
            "--root" => root = PathBuf::from(value("--root")?),
            "--second-port" => {
                second_port = Some(parse_port(&value("--second-port")?, "--second-port")?)
            }
            "--faults" => {
                faults = match value("--faults")?.as_str() {
                    "none" => FaultSource::None,
                    path => FaultSource::File(PathBuf::from(path)),
                }
            }
            "--mount" => mounts.push(parse_mount(&value("--mount")?)?),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let port = match (port, port_env.map(str::trim).filter(|p| !p.is_empty())) {
        (Some(port), _) => port,
        (None, Some(env)) => parse_port(env, "PORT")?,
        (None, None) => 8080,
    };
    Ok(Command::Run(Options {
        host,
        port,
        root,
        second_port,
        faults,
        mounts,
    }))
}

/// `PREFIX=DIR`: a URL path prefix such as `/e2e` (one or more segments, no trailing slash, no
/// `..`) and a folder.
fn parse_mount(text: &str) -> Result<(String, PathBuf), String> {
    let bad = || format!("--mount takes PREFIX=DIR with PREFIX like /e2e, not `{text}`");
    let (prefix, dir) = text.split_once('=').ok_or_else(bad)?;
    let segments_ok = prefix.strip_prefix('/').is_some_and(|rest| {
        rest.split('/')
            .all(|s| !s.is_empty() && s != ".." && s != ".")
    });
    if !segments_ok || dir.is_empty() {
        return Err(bad());
    }
    Ok((prefix.to_string(), PathBuf::from(dir)))
}

/// `text` as a port number; the error names `what` it is.
fn parse_port(text: &str, what: &str) -> Result<u16, String> {
    text.parse::<u16>()
        .map_err(|_| format!("{what} must be a port number from 0 to 65535, not `{text}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn run(list: &[&str], env: Option<&str>) -> Options {
        match parse(args(list), env) {
            Ok(Command::Run(options)) => options,
            other => panic!("expected options, got {other:?}"),
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
        for bad in ["e2e=x", "/=x", "/e2e/=x", "/../x=y", "/e2e=", "/e2e"] {
            assert!(parse(args(&["--mount", bad]), None).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_second_origin_and_the_fault_file() {
        let options = run(&["--second-port", "0", "--faults", "none"], None);
        assert_eq!(options.second_port, Some(0));
        assert_eq!(options.fault_file(), None);
        let options = run(&["--second-port=9002", "--faults=/tmp/f.json"], None);
        assert_eq!(options.second_port, Some(9002));
        assert_eq!(options.fault_file(), Some(PathBuf::from("/tmp/f.json")));
        assert!(parse(args(&["--second-port", "x"]), None).is_err());
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
    fn port_env_is_used_only_without_the_flag() {
        assert_eq!(run(&[], Some("9000")).port, 9000);
        assert_eq!(run(&["--port", "9001"], Some("9000")).port, 9001);
        assert_eq!(run(&[], Some(" ")).port, 8080);
        assert!(parse(args(&[]), Some("http")).is_err());
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(parse(args(&["--port"]), None).is_err());
        assert!(parse(args(&["--port", "70000"]), None).is_err());
        assert!(parse(args(&["--verbose"]), None).is_err());
        assert_eq!(parse(args(&["--help"]), None), Ok(Command::Help));
    }
}

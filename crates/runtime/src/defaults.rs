//! A settings struct read from its own clap flags with every environment
//! variable ignored: the `default_value` of each flag is the one place a
//! default is written, and `Default` impls call [`defaults`]; a cluster
//! started inside one process reads its services' settings from the same
//! flags a process cluster passes on their command lines ([`from_flags`]).

use clap::{Args, Command, FromArgMatches};

/// The value of `T` when no flag is given, whatever the environment holds.
///
/// # Panics
/// When `T` has a required flag, which has no default to give.
pub fn defaults<T: Args + FromArgMatches>() -> T {
    from_flags::<T, &str>([]).expect("every flag of a settings struct has a default")
}

/// The value of `T` with `flags` (`--lease-ms=900`, ...) given and every
/// other flag at its default, whatever the environment holds.
///
/// # Errors
/// When a flag is not one of `T`'s or its value does not parse.
pub fn from_flags<T, S>(flags: impl IntoIterator<Item = S>) -> Result<T, clap::Error>
where
    T: Args + FromArgMatches,
    S: Into<std::ffi::OsString> + Clone,
{
    let command = T::augment_args(Command::new("settings")).mut_args(|arg| arg.env(None));
    let args = std::iter::once(std::ffi::OsString::from("settings")).chain(flags.into_iter().map(Into::into));
    let matches = command.try_get_matches_from(args)?;
    T::from_arg_matches(&matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, clap::Args)]
    struct Sample {
        #[arg(long, env = "FOGBLAST_RUNTIME_SAMPLE_LIMIT", default_value_t = 64)]
        limit: u32,
        #[arg(long, env = "FOGBLAST_RUNTIME_SAMPLE_NAME")]
        name: Option<String>,
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: std::net::SocketAddr,
    }

    #[test]
    fn defaults_come_from_the_flags() {
        let sample: Sample = defaults();
        assert_eq!(sample, Sample { limit: 64, name: None, listen: "127.0.0.1:8080".parse().unwrap() });
    }

    #[test]
    fn given_flags_override_their_defaults_only() {
        let sample: Sample = from_flags(["--limit=7", "--name", "seven"]).unwrap();
        assert_eq!(sample, Sample { limit: 7, name: Some("seven".into()), listen: "127.0.0.1:8080".parse().unwrap() });
    }

    #[test]
    fn an_unknown_flag_is_an_error() {
        assert!(from_flags::<Sample, _>(["--lease-ms=900"]).is_err());
    }

    #[test]
    fn the_environment_is_not_read() {
        let command = Sample::augment_args(Command::new("defaults")).mut_args(|arg| arg.env(None));
        assert!(command.get_arguments().all(|arg| arg.get_env().is_none()));
        // The flags themselves still read it.
        let command = Sample::augment_args(Command::new("sample"));
        assert!(command.get_arguments().any(|arg| arg.get_env().is_some()));
    }
}

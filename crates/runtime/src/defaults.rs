//! A settings struct's defaults, read from its own clap flags with every
//! environment variable ignored: the `default_value` of each flag is the one
//! place a default is written, and `Default` impls call [`defaults`].

use clap::{Args, Command, FromArgMatches};

/// The value of `T` when no flag is given, whatever the environment holds.
///
/// # Panics
/// When `T` has a required flag, which has no default to give.
pub fn defaults<T: Args + FromArgMatches>() -> T {
    let command = T::augment_args(Command::new("defaults")).mut_args(|arg| arg.env(None));
    let matches = command.try_get_matches_from(["defaults"]).expect("every flag of a settings struct has a default");
    T::from_arg_matches(&matches).expect("the defaults parse into the settings")
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
    fn the_environment_is_not_read() {
        let command = Sample::augment_args(Command::new("defaults")).mut_args(|arg| arg.env(None));
        assert!(command.get_arguments().all(|arg| arg.get_env().is_none()));
        // The flags themselves still read it.
        let command = Sample::augment_args(Command::new("sample"));
        assert!(command.get_arguments().any(|arg| arg.get_env().is_some()));
    }
}

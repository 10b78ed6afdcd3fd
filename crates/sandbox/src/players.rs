//! Players on a sandbox, in the protocol's types: greeted, and seated in a
//! game of their own, as tests of whole games begin.

use std::time::Duration;

use fogblast_client::protocol::{ClientFrame, ColorChoice, Create, Hello, Join, Opponent, ServerFrame, Variant};
use fogblast_client::Client;

use crate::{Sandbox, SandboxError};

/// How long a step of these may take: a reply on loopback.
const STEP: Duration = Duration::from_secs(10);

impl Sandbox {
    /// A new player named `name` on gateway `gateway`, greeted: its
    /// connection and its player id.
    pub async fn player(&self, gateway: usize, name: &str) -> Result<(Client, String), SandboxError> {
        let mut client = self.client(gateway).await?;
        let welcome = client.hello(Hello { token: None, name: Some(name.into()) }, STEP).await?;
        Ok((client, welcome.player))
    }
}

/// A game of `variant` that `white` creates for a human opponent and
/// `black` joins by its code, started: its id, once both seats are taken
/// and white has heard so.
pub async fn started_game(
    white: &mut Client,
    black: &mut Client,
    variant: Variant,
    rated: bool,
) -> Result<String, SandboxError> {
    let create = Create {
        variant,
        color: ColorChoice::White,
        clock: None,
        opponent: Opponent::Human,
        level: None,
        rated: Some(rated),
        chess960: None,
    };
    white.send(ClientFrame::Create(create)).await?;
    let (game, code) = white
        .wait_typed("created", STEP, |f| match f {
            ServerFrame::Created { game, code: Some(code), .. } => Some((game, code)),
            _ => None,
        })
        .await?;
    black.send(ClientFrame::Join(Join { code })).await?;
    black.wait_for("joined", STEP, |f| f.kind() == "joined").await?;
    white.wait_for("seated", STEP, |f| f.kind() == "seated" || f.kind() == "state").await?;
    Ok(game)
}

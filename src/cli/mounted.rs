//! The admin command mounted in a host's binary ([`Admin::run`](super::Admin::run) with its
//! server): user and client commands through the server's own seams, so that they write where
//! the server reads.

use std::time::Duration;

use super::commands::{ClientCommand, Command, KeysCommand, UserCommand};
use super::keys;
use super::print::print_consents;
use super::{Failure, add_client, client_id_of, no_consent, read_claims, read_password};
use crate::server::AuthorizationServer;
use crate::store::{Account, User};

/// A mounted command run through the server: done, or one that maintains the SQL store itself.
pub(super) enum Served {
    Done,
    Store(Command),
}

/// Runs a user or client command through `server`'s seams; hands back those that need the
/// database itself.
pub(super) async fn on_server(
    server: &AuthorizationServer,
    command: Command,
) -> Result<Served, Failure> {
    let (_, _, tokens) = server.admin_seams();
    match command {
        Command::User(UserCommand::Add { username }) => {
            server.can_add_users()?;
            let password = read_password()?;
            let user = server.add_user(&username, &password).await?;
            say!("user_id: {}", user.id().as_str());
        }
        Command::User(UserCommand::SetPassword { username }) => {
            server.can_add_users()?;
            let password = read_password()?;
            let user = server_user(server, &username).await?;
            if !server.set_password(user.id(), &password).await? {
                return Err(Failure::Refused(format!("no user {username:?}")));
            }
        }
        Command::User(UserCommand::SetClaims { username, claims }) => {
            let claims = read_claims(&claims)?;
            let user = server_user(server, &username).await?;
            if !server.set_user_claims(user.id(), &claims).await? {
                return Err(Failure::Refused(format!("no user {username:?}")));
            }
            say!("claims: {}", claims.to_stored());
        }
        Command::User(UserCommand::EndSessions { username }) => {
            let user = server_user(server, &username).await?;
            let ended = server
                .end_user_sessions(user.id())
                .await
                .map_err(|error| Failure::Refused(format!("the sessions did not end: {error}")))?;
            say!("sessions_ended: {ended}");
        }
        Command::User(UserCommand::Consents { username }) => {
            let user = server_user(server, &username).await?;
            print_consents(&server.consents(user.id()).await?);
        }
        Command::User(UserCommand::ForgetConsent {
            username,
            client_id,
        }) => {
            let user = server_user(server, &username).await?;
            let client = client_id_of(&client_id)?;
            if !server.forget_consent(user.id(), &client).await? {
                return Err(no_consent(&username, &client_id));
            }
        }
        Command::Keys(KeysCommand::List(_)) => keys::list(server.key_seam()).await?,
        Command::Keys(KeysCommand::Rotate(_)) => keys::rotate(server.key_seam()).await?,
        Command::Client(ClientCommand::Add(add)) => {
            add_client(registry(server)?, add).await?;
        }
        Command::Client(ClientCommand::RotateSecret { client_id, overlap }) => {
            let overlap = Duration::from_secs(overlap);
            match server.rotate_client_secret(&client_id, overlap).await {
                Ok(secret) => {
                    say!("client_id: {client_id}");
                    say!("client_secret: {}", secret.expose_secret());
                }
                Err(crate::error::SecretRotationError::Store(error)) => return Err(error.into()),
                Err(refused) => return Err(Failure::Refused(refused.to_string())),
            }
        }
        Command::Client(ClientCommand::ForgetIdle { .. }) => {
            let forgotten = server.forget_idle_clients().await?;
            say!("forgotten: {forgotten}");
        }
        Command::Client(ClientCommand::Remove { client_id }) => {
            if !registry(server)?.remove_client(&client_id).await? {
                return Err(Failure::Refused(format!("no client {client_id:?}")));
            }
            // Its tokens die with it (as RFC 7592 §2.3 deletion does).
            let revoked = tokens.revoke_client(&client_id).await?;
            say!("revoked_families: {revoked}");
        }
        command => return Ok(Served::Store(command)),
    }
    Ok(Served::Done)
}

/// The client registry `server` registers its clients in, or why there is none.
fn registry(server: &AuthorizationServer) -> Result<&dyn crate::store::Admin, Failure> {
    server.admin_seams().1.ok_or_else(|| {
        Failure::Refused(
            "this server has no client registry (its clients come from a store of the host's \
             own): register clients there, or give the builder .client_registry(...)"
                .to_owned(),
        )
    })
}

/// The user `username` names in the store `server` reads users from.
async fn server_user(server: &AuthorizationServer, username: &str) -> Result<User, Failure> {
    let found = server.admin_seams().0.find_account(username).await?;
    found
        .map(Account::into_user)
        .ok_or_else(|| Failure::Refused(format!("no user {username:?}")))
}

//! The `grantor` command's words: its subcommands and their arguments, as clap reads them.

use clap::{Args, Subcommand, ValueEnum};

use crate::client::GrantType;

#[derive(Subcommand)]
pub(super) enum Command {
    /// Registers, lists, rotates the secret of, or removes clients.
    #[command(subcommand)]
    Client(ClientCommand),
    /// Adds users, resets their passwords (read from standard input) or sets their claims.
    #[command(subcommand)]
    User(UserCommand),
    /// Deletes expired codes, tokens, sessions and counters, and revoked families.
    Purge,
    /// Applies the schema's pending migrations (every command does first): run it once ahead
    /// of a rolling deploy whose nodes open the store without migrating.
    Migrate,
}

#[derive(Subcommand)]
pub(super) enum ClientCommand {
    /// Registers a client; a confidential one's generated secret is printed once.
    Add(AddClient),
    /// Lists every client: id, kind, name, grant types, scopes, redirect URIs.
    List,
    /// Gives a confidential client a new generated secret (printed once); the old one keeps
    /// working for `--overlap` seconds.
    RotateSecret {
        /// The client's id.
        client_id: String,
        /// How long the old secret keeps working, in seconds.
        #[arg(long, default_value_t = 86_400)]
        overlap: u64,
    },
    /// Removes a client.
    Remove {
        /// The client's id.
        client_id: String,
    },
    /// Deletes the self-registered clients unused for longer than the registration policy's
    /// idle lifetime (mounted in a host's binary: the server's; alone: `--idle-for`), with
    /// their tokens; prints how many went.
    ForgetIdle {
        /// How long a self-registered client may go unused, in seconds, when no server says
        /// (the standalone command).
        #[arg(long, default_value_t = 30 * 86_400)]
        idle_for: u64,
    },
}

#[derive(Args)]
pub(super) struct AddClient {
    /// The client's id.
    pub(super) client_id: String,
    /// Its name, shown on the approval page (default: the id).
    #[arg(long)]
    pub(super) name: Option<String>,
    /// A grant type it may use (repeat for several).
    #[arg(long = "grant", value_enum, required = true)]
    pub(super) grants: Vec<Grant>,
    /// A redirect URI (repeat for several; needed for the code and implicit grants).
    #[arg(long = "redirect-uri")]
    pub(super) redirect_uris: Vec<String>,
    /// Accept redirect URIs that are `http` on a host other than a loopback one (codes sent
    /// to them can be read on the way): only for a network you know.
    #[arg(long)]
    pub(super) allow_insecure_redirect_uris: bool,
    /// The scopes it may ask for, space-separated.
    #[arg(long, default_value = "")]
    pub(super) scope: String,
    /// A public client (no secret: an app on a user's device; PKCE is required).
    #[arg(long)]
    pub(super) public: bool,
    /// Skip the approval page: signing in is approval (first-party clients).
    #[arg(long)]
    pub(super) no_approval: bool,
    /// The client sends its secret in the token request's body (`client_secret_post`);
    /// HTTP Basic is then refused to it.
    #[arg(long)]
    pub(super) secret_in_body: bool,
    /// How its ID tokens are signed (OpenID Connect; default RS256).
    #[arg(long, value_enum)]
    pub(super) id_token_alg: Option<IdTokenAlg>,
    /// Where a logout may send the browser back (repeat for several; OpenID Connect
    /// RP-Initiated Logout).
    #[arg(long = "post-logout-redirect-uri")]
    pub(super) post_logout_redirect_uris: Vec<String>,
    /// Where a logout token is posted when a session it was issued tokens in ends (OpenID
    /// Connect Back-Channel Logout).
    #[arg(long)]
    pub(super) backchannel_logout_uri: Option<String>,
}

/// An ID-token signing algorithm.
#[derive(Clone, Copy, ValueEnum)]
pub(super) enum IdTokenAlg {
    #[value(name = "RS256")]
    Rs256,
    #[value(name = "ES256")]
    Es256,
    #[value(name = "EdDSA")]
    EdDsa,
}

impl From<IdTokenAlg> for crate::settings::SigningAlgorithm {
    fn from(alg: IdTokenAlg) -> Self {
        match alg {
            IdTokenAlg::Rs256 => Self::RS256,
            IdTokenAlg::Es256 => Self::ES256,
            IdTokenAlg::EdDsa => Self::EdDSA,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum Grant {
    #[value(name = "authorization_code")]
    AuthorizationCode,
    #[value(name = "implicit")]
    Implicit,
    #[value(name = "password")]
    Password,
    #[value(name = "refresh_token")]
    RefreshToken,
    #[value(name = "client_credentials")]
    ClientCredentials,
    #[value(name = "device_code")]
    DeviceCode,
    #[value(name = "token_exchange")]
    TokenExchange,
    #[value(name = "jwt_bearer")]
    JwtBearer,
}

impl From<Grant> for GrantType {
    fn from(grant: Grant) -> Self {
        match grant {
            Grant::AuthorizationCode => GrantType::AuthorizationCode,
            Grant::Implicit => GrantType::Implicit,
            Grant::Password => GrantType::Password,
            Grant::RefreshToken => GrantType::RefreshToken,
            Grant::ClientCredentials => GrantType::ClientCredentials,
            Grant::DeviceCode => GrantType::DeviceCode,
            Grant::TokenExchange => GrantType::TokenExchange,
            Grant::JwtBearer => GrantType::JwtBearer,
        }
    }
}

#[derive(Subcommand)]
pub(super) enum UserCommand {
    /// Adds a user (an email address); the password is the first line of standard input.
    Add {
        /// The username: an email address, unique in any case.
        username: String,
    },
    /// Replaces a user's password with the first line of standard input.
    SetPassword {
        /// The username.
        username: String,
    },
    /// Replaces a user's OpenID Connect claims (OIDC Core §5.1), released to clients by the
    /// scopes they are granted; prints what is kept (names grantor sets itself, such as `sub`,
    /// are dropped).
    SetClaims {
        /// The username.
        username: String,
        /// A JSON object of at most 8 KiB: `{"name": "Alice", "email": "alice@example.com",
        /// "email_verified": true}`; `{}` clears them.
        claims: String,
    },
}

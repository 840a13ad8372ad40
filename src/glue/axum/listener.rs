//! HTTPS for `axum::serve` (features `axum` and `tls`): a listener whose connections are TLS,
//! each with the client certificate it presented.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ::axum::extract::connect_info::Connected;
use ::axum::serve::{IncomingStream, Listener};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::mtls::ClientCertificate;

/// The most connections a [`TlsListener`] holds between the TCP accept and axum (in the TLS
/// handshake, or handshaken and not yet taken); a connection past them waits in the kernel's
/// backlog. Each is a few kilobytes of rustls state.
pub const MAX_HANDSHAKES: usize = 512;

/// How long a client has to finish its TLS handshake before its connection is closed: a client
/// that opens connections and stays silent holds no handshake slot longer.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A TCP listener whose connections are served over TLS with a rustls configuration
/// ([`server_config`](crate::tls::server_config)). Handshakes run concurrently, at most
/// [`MAX_HANDSHAKES`] at once and each within [`HANDSHAKE_TIMEOUT`], so one slow client delays
/// no other; a failed one is dropped (and logged at debug level).
///
/// Serve the router with `into_make_service_with_connect_info::<TlsPeer>()`: grantor's routes
/// and extractors then take each request's caller address and client certificate from it.
///
/// ```no_run
/// # async fn run(app: axum::Router, config: rustls::ServerConfig) -> std::io::Result<()> {
/// use grantor::axum::{TlsListener, TlsPeer};
///
/// let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
/// let listener = TlsListener::new(tcp, config);
/// axum::serve(listener, app.into_make_service_with_connect_info::<TlsPeer>()).await
/// # }
/// ```
#[derive(Debug)]
pub struct TlsListener {
    local: SocketAddr,
    accepted: mpsc::Receiver<(TlsStream<TcpStream>, TlsPeer)>,
}

impl TlsListener {
    /// Serves TLS with `config` on `tcp`'s connections; its accept loop runs on the current
    /// tokio runtime until the listener is dropped.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn new(tcp: TcpListener, config: rustls::ServerConfig) -> Self {
        let local = tcp
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
        let (done, accepted) = mpsc::channel(64);
        tokio::spawn(accept_loop(tcp, TlsAcceptor::from(Arc::new(config)), done));
        Self { local, accepted }
    }
}

/// Accepts TCP connections and hands each to a handshake task of its own, while a slot is free.
async fn accept_loop(
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    done: mpsc::Sender<(TlsStream<TcpStream>, TlsPeer)>,
) {
    let slots = Arc::new(Semaphore::new(MAX_HANDSHAKES));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let (stream, address) = tokio::select! {
            accepted = tcp.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // As axum's own listener: errors such as too many open files pass.
                    tracing::debug!(%error, "grantor: accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = done.closed() => return,
        };
        let acceptor = acceptor.clone();
        let done = done.clone();
        tokio::spawn(async move {
            let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
            // The slot is held until axum takes the connection: at most `MAX_HANDSHAKES`
            // connections are ever between the TCP accept and axum.
            let _slot = slot;
            match handshake {
                Ok(Ok(stream)) => {
                    let certificate = crate::tls::client_certificate(stream.get_ref().1);
                    let peer = TlsPeer {
                        address,
                        certificate,
                    };
                    // The listener may be gone: the connection closes with it.
                    let _ = done.send((stream, peer)).await;
                }
                Ok(Err(error)) => tracing::debug!(%error, "grantor: TLS handshake failed"),
                Err(_) => tracing::debug!("grantor: TLS handshake timed out"),
            }
        });
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = TlsPeer;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(accepted) => accepted,
            // The accept loop ends only when this listener is dropped, so never while it
            // accepts; wait rather than hand axum a connection that is not there.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(TlsPeer {
            address: self.local,
            certificate: None,
        })
    }
}

/// Who is at the other end of a [`TlsListener`]'s connection: the peer's address and the client
/// certificate it presented, if any. The connect info grantor's routes read.
#[derive(Debug, Clone)]
pub struct TlsPeer {
    /// The peer's socket address.
    pub address: SocketAddr,
    /// The certificate chain it presented in the handshake.
    pub certificate: Option<ClientCertificate>,
}

impl Connected<IncomingStream<'_, TlsListener>> for TlsPeer {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Self {
        stream.remote_addr().clone()
    }
}

//! `grantor`: the administrator's command for grantor's SQL stores (feature `cli`); see
//! [`grantor::cli`].

fn main() -> std::process::ExitCode {
    grantor::cli::main()
}

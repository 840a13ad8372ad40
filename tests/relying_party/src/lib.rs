//! Nothing here: the package's tests (`tests/`) drive grantor's demo servers.

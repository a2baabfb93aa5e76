//! Round trips (filled in as the containers land).

//! TavernAI-era WebP and JPEG cards (stub: to be written).

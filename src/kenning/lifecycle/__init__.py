"""Memory lifecycle: reconcile, ingest, consolidation, sectors, hints."""

"""Tenancy: organizations, users, teams, personas, API keys, switches and the audit log."""

from .model import ApiKey, AuditEntry, DirectoryEntry, Org, Persona, Team, User
from .service import Directory
from .userdata import Erasure

__all__ = [
    "Directory",
    "Erasure",
    "ApiKey",
    "AuditEntry",
    "DirectoryEntry",
    "Org",
    "Persona",
    "Team",
    "User",
]

"""Tools an agent uses on a repository task, each a name, a description and a typed argument model."""

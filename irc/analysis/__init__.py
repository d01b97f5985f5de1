"""Analyses of irc's IR that prove properties passes must keep (see
:mod:`irc.analysis.bounds`)."""

"""Continuous queries: RSP-QL, C-SPARQL and CQELS-QL parsed into one model."""

"""The memory surfaces: day notes, wiki pages, the RAG index and the property graph."""

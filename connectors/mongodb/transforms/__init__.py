"""Debezium's MongoDB transforms (``io.debezium.connector.mongodb.transforms``): ExtractNewDocumentState
(:mod:`.extract_new_document_state`) and the document schemas it infers (:mod:`.schema_inference`)."""

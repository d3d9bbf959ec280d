"""Java Kafka client settings for kafka-python: the translation (:mod:`.settings`), the JAAS parser
(:mod:`.jaas`), trust and key stores (:mod:`.tls`, :mod:`.jks`) and OAUTHBEARER tokens (:mod:`.oauth`)."""

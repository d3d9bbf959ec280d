// Feeds change events (one base64 BSON change-stream document per input line) through Debezium's own classes, as
// its streaming source does: MongoDbOffsetContext.changeStreamEvent (source block and offset), MongoDbSchema /
// MongoDbCollectionSchema (key and value schemas), MongoDbChangeRecordEmitter (the record, ts_ms from a clock fixed
// at 1800000000000), the topic from the connector's topic naming strategy; prints one JSON object per event: topic,
// key and value as JsonConverter (schemas.enable=true) writes them, the offset as a schemaless JsonConverter writes
// it (what lands in the offsets topic). Recording tool only: see records_golden.py.
//
//   javac -cp '<plugin>/*:<connect libs>/*' -d out DebeziumRecords.java
//   java -cp '<plugin>/*:<connect libs>/*:out' DebeziumRecords < events.b64 > records.jsonl

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.debezium.config.Configuration;
import io.debezium.connector.mongodb.CollectionId;
import io.debezium.connector.mongodb.MongoDbConnectorConfig;
import io.debezium.connector.mongodb.MongoDbOffsetContext;
import io.debezium.connector.mongodb.MongoDbPartition;
import io.debezium.connector.mongodb.MongoDbSchema;
import io.debezium.connector.mongodb.MongoDbTaskContext;
import io.debezium.connector.mongodb.recordemitter.MongoDbChangeRecordEmitter;
import io.debezium.schema.DataCollectionSchema;
import io.debezium.spi.topic.TopicNamingStrategy;
import io.debezium.util.Clock;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;

public class DebeziumRecords {
    public static void main(String[] args) throws Exception {
        Configuration config = Configuration.create()
                .with("topic.prefix", "fulfillment")
                .with("mongodb.connection.string", "mongodb://localhost:27017/?replicaSet=rs0")
                .build();
        MongoDbConnectorConfig connectorConfig = new MongoDbConnectorConfig(config);
        MongoDbTaskContext taskContext = new MongoDbTaskContext(config);
        @SuppressWarnings("unchecked")
        TopicNamingStrategy<CollectionId> topics = (TopicNamingStrategy<CollectionId>) connectorConfig
                .getTopicNamingStrategy(MongoDbConnectorConfig.TOPIC_NAMING_STRATEGY);
        MongoDbSchema schemas = new MongoDbSchema(connectorConfig, taskContext, topics,
                connectorConfig.getSourceInfoStructMaker().schema(), connectorConfig.schemaNameAdjuster());
        JsonConverter withSchemas = new JsonConverter();
        withSchemas.configure(Map.of("schemas.enable", "true"), false);
        JsonConverter keys = new JsonConverter();
        keys.configure(Map.of("schemas.enable", "true"), true);
        JsonConverter schemaless = new JsonConverter();
        schemaless.configure(Map.of("schemas.enable", "false"), true);
        Codec<ChangeStreamDocument<BsonDocument>> codec = ChangeStreamDocument.createCodec(BsonDocument.class,
                MongoClientSettings.getDefaultCodecRegistry());
        Clock clock = () -> 1800000000000L;
        ObjectMapper mapper = new ObjectMapper();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            byte[] bson = Base64.getDecoder().decode(line.trim());
            ChangeStreamDocument<BsonDocument> event = codec.decode(new BsonBinaryReader(ByteBuffer.wrap(bson)),
                    DecoderContext.builder().build());
            MongoDbOffsetContext offset = MongoDbOffsetContext.empty(connectorConfig);
            offset.changeStreamEvent(event);
            MongoDbPartition partition = new MongoDbPartition("fulfillment");
            CollectionId collection = new CollectionId(event.getNamespace().getDatabaseName(),
                    event.getNamespace().getCollectionName());
            DataCollectionSchema schema = schemas.schemaFor(collection);
            ObjectNode[] first = new ObjectNode[1];
            new MongoDbChangeRecordEmitter(partition, offset, clock, event, connectorConfig).emitChangeRecords(schema,
                    (p, s, operation, key, value, offsetContext, headers) -> {
                        if (first[0] != null) {
                            return;  // a delete's tombstone follows; the golden holds the change record
                        }
                        ObjectNode record = mapper.createObjectNode();
                        record.put("topic", topics.dataChangeTopic(collection));
                        record.put("key", text(keys.fromConnectData("t", schema.keySchema(), key)));
                        record.put("value", text(withSchemas.fromConnectData("t", value.schema(), value)));
                        record.put("offset", text(schemaless.fromConnectData("t", null, offsetContext.getOffset())));
                        first[0] = record;
                    });
            out.println(mapper.writeValueAsString(first[0]));
        }
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}

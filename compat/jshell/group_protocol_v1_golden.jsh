// The bytes of Kafka Connect's IncrementalCooperativeConnectProtocol ("compatible"), as hex, one "NAME hex" line each,
// for tests/unit/connect/test_group_protocol.py. Run by `python -m compat.record group-protocol` (jshell
// --class-path <the connect-runtime jars compat/pom.xml pins>), which writes the lines of both scripts to
// tests/unit/connect/data/group_protocol_golden.txt after a header line naming the JDK and Kafka Connect.
import org.apache.kafka.connect.runtime.distributed.*;
import org.apache.kafka.connect.util.ConnectorTaskId;
import java.nio.ByteBuffer;
String hex(ByteBuffer b) { var sb = new StringBuilder(); while (b.hasRemaining()) sb.append(String.format("%02x", b.get())); return sb.toString(); }
var cur = new ExtendedAssignment((short)1, (short)0, "connect-1-abc", "http://127.0.0.1:8083/", 7L, List.of("alpha"), List.of(new ConnectorTaskId("alpha", 0)), List.of(), List.of(), 0);
System.out.println("META1 " + hex(IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState("http://127.0.0.1:8083/", 42L, cur), false)));
System.out.println("META1NULL " + hex(IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState("http://127.0.0.1:8083/", 42L, null), false)));
var a = new ExtendedAssignment((short)1, (short)0, "connect-1-abc", "http://127.0.0.1:8083/", 7L, List.of("alpha", "beta"), List.of(new ConnectorTaskId("alpha", 0), new ConnectorTaskId("beta", 0), new ConnectorTaskId("alpha", 1)), List.of("gamma"), List.of(new ConnectorTaskId("gamma", 2)), 1500);
System.out.println("ASSIGN1 " + hex(IncrementalCooperativeConnectProtocol.serializeAssignment(a, false)));
var e = new ExtendedAssignment((short)1, (short)0, "connect-1-abc", "http://127.0.0.1:8083/", 7L, List.of(), List.of(), List.of(), List.of(), 0);
System.out.println("ASSIGN1EMPTY " + hex(IncrementalCooperativeConnectProtocol.serializeAssignment(e, false)));
System.out.println("DESER " + IncrementalCooperativeConnectProtocol.deserializeAssignment(IncrementalCooperativeConnectProtocol.serializeAssignment(a, false)));
/exit

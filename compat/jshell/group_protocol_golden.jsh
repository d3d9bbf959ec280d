// The bytes of Kafka Connect's ConnectProtocol (the eager "default" subprotocol), as hex, one "NAME hex" line each,
// for tests/unit/connect/test_group_protocol.py. Run by `python -m compat.record group-protocol` (jshell
// --class-path <the connect-runtime jars compat/pom.xml pins>), which writes the lines of both scripts to
// tests/unit/connect/data/group_protocol_golden.txt after a header line naming the JDK and Kafka Connect.
import org.apache.kafka.connect.runtime.distributed.*;
import org.apache.kafka.connect.util.ConnectorTaskId;
import java.nio.ByteBuffer;
String hex(ByteBuffer b) { var sb = new StringBuilder(); while (b.hasRemaining()) sb.append(String.format("%02x", b.get())); return sb.toString(); }
System.out.println("META " + hex(ConnectProtocol.serializeMetadata(new ExtendedWorkerState("http://127.0.0.1:8083/", 42L, null))));
var a = new ExtendedAssignment((short)0, (short)0, "connect-1-abc", "http://127.0.0.1:8083/", 7L, List.of("alpha", "beta"), List.of(new ConnectorTaskId("alpha", 0), new ConnectorTaskId("beta", 0), new ConnectorTaskId("alpha", 1)), List.of(), List.of(), 0);
System.out.println("ASSIGN " + hex(ConnectProtocol.serializeAssignment(a)));
var m = new ExtendedAssignment((short)0, (short)1, "connect-1-abc", "http://127.0.0.1:8083/", 9L, List.of(), List.of(), List.of(), List.of(), 0);
System.out.println("MISMATCH " + hex(ConnectProtocol.serializeAssignment(m)));
/exit

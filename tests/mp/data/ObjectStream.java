// Writes tests/mp/data/objectstream.bin: the payload of an edu.rit.mp object
// message (code 9) as a Java program makes it, one ObjectOutputStream stream
// holding a few objects of the JDK's own classes, so that the test data is
// real Java serialization rather than bytes written by hand. It reads the file
// back with ObjectInputStream before it exits, so a stream Java itself cannot
// decode is never committed. See README.md beside it.
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;

public class ObjectStream {
    public static void main(String[] args) throws IOException, ClassNotFoundException {
        List<String> words = new ArrayList<>(List.of("edu.rit.mp", "object", "message"));
        int[] ints = {1, -1, 30144596};
        Double boxed = Double.valueOf(-0.5);

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(words);
            out.writeObject(ints);
            out.writeObject(boxed);
        }
        byte[] stream = bytes.toByteArray();

        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(stream))) {
            if (!words.equals(in.readObject()) || !java.util.Arrays.equals(ints, (int[]) in.readObject())
                || !boxed.equals(in.readObject()))
                throw new IOException("the stream does not read back as written");
        }
        try (FileOutputStream file = new FileOutputStream(args.length > 0 ? args[0] : "objectstream.bin")) {
            file.write(stream);
        }
        System.out.println(stream.length + " bytes");
    }
}

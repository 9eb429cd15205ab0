// Echo bot in Java: answers ECHO x with x, leaves at END.
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class Echo {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.trim().split(" ");
            if (parts[0].equals("END")) return;
            System.out.println(parts[1]);
            System.out.flush();
        }
    }
}

// Echo bot in C++: answers ECHO x with x, leaves at END.
#include <iostream>
#include <string>

int main() {
    std::string word;
    while (std::cin >> word) {
        if (word == "END") return 0;
        long x;
        std::cin >> x;
        std::cout << x << std::endl;
    }
    return 0;
}
